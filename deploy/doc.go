// Package deploy holds what an operator installs beside the wharf binary, and the tests that
// keep it true to the code. It has no Go API: the package exists for its tests.
//
// # What it ships
//
//	grafana/ship.json             dashboard of the ship service (its /metrics)
//	grafana/backfill.json         dashboard of backfill workers (their /metrics)
//	grafana/jobs.json             dashboard of the batch jobs' --metrics-file files
//	prometheus/wharf-alerts.yml   alerting rules: ship, backfill, batch jobs
//	prometheus/wharf-alerts_test.yml  promtool unit tests of every alert
//	systemd/wharf-ship.service    a hardened unit for `wharf ship`
//
// docs/operations.md says how to install each and what every alert asks of whoever it wakes.
//
// # What its tests promise
//
//   - The rules pass `promtool check rules`, and their unit tests pass `promtool test rules`;
//     every alert has a case where it fires and one where it does not. (Promtool comes from
//     WHARF_TEST_PROMTOOL: without it the test skips, or fails when the run requires its
//     tools, as internal/testenv says.)
//   - Every dashboard parses strictly (no unknown keys where the model is known, no trailing
//     data); every panel queries the dashboard's Prometheus data source variable and has at
//     least one target with an expression; every expression, and every variable's query,
//     is valid PromQL (promtool checks them as recording rules).
//   - Every metric name the rules, their tests and the dashboards use is one the code exports:
//     the names are checked against the exposition of a real ship.Shipper's and a real
//     backfill worker's /metrics, scraped in-process, and of a metrics file written by package
//     metricsfile with the figures the commands set. A histogram's _bucket, _sum and _count
//     series count as their family. A renamed or removed metric fails the test.
package deploy
