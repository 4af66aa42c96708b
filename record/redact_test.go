package record

import "testing"

func TestEditObjects(t *testing.T) {
	// Mark every object that has "x": each one, at any depth, in arrays too.
	mark := func(obj map[string]any) bool {
		if _, ok := obj["x"]; !ok {
			return false
		}
		obj["x"] = "seen"
		return true
	}
	tests := []struct {
		msg, want string
		changed   bool
	}{
		{`{"a":1}`, `{"a":1}`, false},
		{`{"x":1}`, `{"x":"seen"}`, true},
		{`[{"a":[{"b":{"x":1}}]},{"x":2,"y":{"x":3}}]`, `[{"a":[{"b":{"x":"seen"}}]},{"x":"seen","y":{"x":"seen"}}]`, true},
		{`"x"`, `"x"`, false},
	}
	for _, tt := range tests {
		v, err := decodeJSON([]byte(tt.msg))
		if err != nil {
			t.Fatal(err)
		}
		changed := editObjects(v, mark)
		out, err := encodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if changed != tt.changed || string(out) != tt.want {
			t.Errorf("editObjects(%s) = %s, %v; want %s, %v", tt.msg, out, changed, tt.want, tt.changed)
		}
	}
}
