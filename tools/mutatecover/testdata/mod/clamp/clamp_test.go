package clamp

import "testing"

func TestClamp(t *testing.T) {
	if got := Clamp(5); got != 5 {
		t.Fatalf("Clamp(5) = %d, want 5", got)
	}
}
