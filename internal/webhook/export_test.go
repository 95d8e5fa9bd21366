package webhook

// SetDialHook makes s call f with every address its transport is about to
// connect to (after resolution) and the destination check's verdict, nil or
// the *BlockedError that abandons the address. Call it before s sends.
func SetDialHook(s *Sender, f func(address string, err error)) { s.guard.dialed = f }
