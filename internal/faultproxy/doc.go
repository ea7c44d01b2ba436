// Package faultproxy is an HTTP reverse proxy for tests: it listens on 127.0.0.1:0 in front
// of a real server (MinIO, SeaweedFS, an httptest.Server) and injects faults by rule, so tests
// of several packages can prove how wharf's retry policy and conditional writes behave when a
// store misbehaves.
//
// # Faults
//
// A Rule matches requests by method, path substring, query substring and the presence of a
// header; it applies its Fault to the next Times matching requests (0: every one), after
// letting Skip of them through. Rules are tried in the order they were added; the first that
// still has requests to spend wins. The faults:
//
//	Reset       close the connection with a TCP RST before answering; the backend sees nothing
//	Status      answer Rule.Status with an S3-style XML error body (<Error><Code>SlowDown</Code>…)
//	Stall       wait Rule.Delay, then forward and answer normally; the backend sees the request
//	            only after the wait, and not at all if the client gave up
//	StallBody   forward, send the headers and Rule.After body bytes, wait Rule.Delay, send the rest
//	Truncate    forward, send the headers (with the full Content-Length) and Rule.After body
//	            bytes, then close the connection
//	Lost        forward, let the backend answer, then reset the connection: the request took
//	            effect but its answer is lost (what makes a conditional put's outcome unknown)
//	DropBody    forward only Rule.After bytes of the request's body, with a Content-Length (and
//	            a signed payload's hash) to match, re-signed with the keys in Options: the backend
//	            stores a shortened object and answers success, as behind a proxy that lost the
//	            rest of the body
//	Corrupt     forward, and answer with the byte at offset Rule.After of the body flipped (every
//	            bit inverted), the length and headers unchanged: a bit flip on the path
//
// StripConditions(true) removes If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since from every forwarded request, simulating a store that ignores conditions.
// The AWS SDK for Go v2 signs those headers (its SigV4 signer signs every header but
// Authorization, User-Agent, X-Amzn-Trace-Id, Expect and Transfer-Encoding), so a stripped
// request would fail the server's signature check; the proxy therefore re-signs such a request
// with the keys in Options, keeping its date, region, payload hash and the rest of its signed
// headers. Without keys a stripped signed request is answered 500 FaultProxyCannotResign.
//
// # Hosts and signatures
//
// The request is forwarded with the Host header the client sent (the proxy's own host:port),
// which is the host the client signed; the server verifies against the Host it receives, so
// signed requests pass through unchanged.
//
// # Records
//
// Every request the proxy saw is recorded (method, path, query, headers as the client sent
// them, and the fault applied), so a test can assert how many attempts a client made.
//
// # Connection reuse
//
// By default the proxy answers every request with Connection: close. Go's HTTP client
// silently resends an idempotent request (GET, HEAD) once when a reused keep-alive connection
// fails before any response byte; with reuse a Reset would be absorbed below the code under
// test and attempt counts would be off by one. Options.KeepAlive turns reuse back on.
package faultproxy
