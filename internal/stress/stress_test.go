package stress

import "testing"

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
	}{
		{"", 2},
		{"0", 2},
		{"yes", 2},
		{"1", 20},
	} {
		t.Setenv(Env, tc.env)
		if got := Size(t, 2, 20); got != tc.want {
			t.Errorf("%s=%q: Size(2, 20) = %d, want %d", Env, tc.env, got, tc.want)
		}
		if got := Full(); got != (tc.want == 20) {
			t.Errorf("%s=%q: Full() = %v", Env, tc.env, got)
		}
	}
}
