package bearer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTransport(t *testing.T) {
	// The server answers with the Authorization header it got.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	for token, want := range map[string]string{"t0k3n": "Bearer t0k3n", "": ""} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Keep", "1")
		resp, err := Client(token).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("token %q: the server got Authorization %q, want %q", token, got, want)
		}
		if req.Header.Get("Authorization") != "" || req.Header.Get("X-Keep") != "1" {
			t.Errorf("the caller's request was modified: %v", req.Header)
		}
	}
}
