// Package listen checks and serves the address on which a long-running job (the ship service,
// a backfill worker) answers /metrics, /status and /healthz (the service adds its status page at /).
//
// Its promises: an address is "off" or host:port, and a host that is not a loopback address
// is refused unless the caller's configuration explicitly allows serving beyond this machine
// (what those endpoints show describes the job's data); a bind failure says why in words an
// operator can act on (port in use, not permitted, not this machine's address); Stop returns
// only when the server has stopped serving. The job owns its error codes and wraps these
// errors with them.
package listen
