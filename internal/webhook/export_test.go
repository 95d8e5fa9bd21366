package webhook

import "time"

// SetDialHook makes s call f with every address its transport is about to
// connect to (after resolution) and the destination check's verdict, nil or
// the *outbound.BlockedError that abandons the address. Call it before s sends.
func SetDialHook(s *Sender, f func(address string, err error)) { s.dialed = f }

// SetHealthCheck sets c's HTTP/2 health check interval (ClientConfig.HealthCheck).
func SetHealthCheck(c *Config, d time.Duration) { c.healthCheck = d }
