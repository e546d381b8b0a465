package view_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/view"
)

// getPage gets path from s, as user when set, and returns the status,
// the content type and the body.
func getPage(t *testing.T, s *view.Server, path, user, password string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+s.Addr().String()+path, nil)
	require.NoError(t, err)
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	c := http.Client{Timeout: wait}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestPage: / serves the embedded page and its files; /stats.json is 404
// until SetStats gives it a handler.
func TestPage(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true})
	for _, tc := range []struct{ path, typ, has string }{
		{"/", "text/html; charset=utf-8", `<canvas id="plot"`},
		{"/page.js", "text/javascript; charset=utf-8", `"foxglove.websocket.v1"`},
		{"/page.css", "text/css; charset=utf-8", "#plot"},
	} {
		code, typ, body := getPage(t, s, tc.path, "", "")
		require.Equal(t, http.StatusOK, code, tc.path)
		require.Equal(t, tc.typ, typ, tc.path)
		require.Contains(t, body, tc.has, tc.path)
	}
	code, _, _ := getPage(t, s, "/nope.js", "", "")
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = getPage(t, s, "/stats.json", "", "")
	require.Equal(t, http.StatusNotFound, code, "no stats yet")
	s.SetStats(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"callbacks":[]}`) }))
	code, _, body := getPage(t, s, "/stats.json", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, `{"callbacks":[]}`, body)
}

// TestPageUsers: with users, the page and its stats need the credentials
// that the WebSocket upgrade needs, so that the browser asks for them once.
func TestPageUsers(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Users: []view.User{{Username: "ops", Password: "pw", Read: []string{"#"}}}})
	for _, path := range []string{"/", "/page.js", "/stats.json"} {
		code, _, _ := getPage(t, s, path, "", "")
		require.Equal(t, http.StatusUnauthorized, code, path)
		code, _, _ = getPage(t, s, path, "ops", "wrong")
		require.Equal(t, http.StatusUnauthorized, code, path)
	}
	code, _, body := getPage(t, s, "/", "ops", "pw")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "robotexec live view")
}
