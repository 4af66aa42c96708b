package proc

import (
	"strings"
	"testing"
)

func TestLogArgsHidesSecrets(t *testing.T) {
	args := []string{"exec", "-c", `model="gpt-5.5"`, "-c", `mcp_servers.x={url="u", http_headers={"Authorization"="Bearer s3cr3t-value"}}`,
		"-c", "model_providers.p.experimental_bearer_token=abcdef1234567890", "-"}
	got := strings.Join(LogArgs(args), " ")
	if strings.Contains(got, "s3cr3t-value") || strings.Contains(got, "abcdef1234567890") || !strings.Contains(got, `model="gpt-5.5"`) {
		t.Errorf("logged args = %s", got)
	}
	if !strings.Contains(args[4], "s3cr3t-value") {
		t.Error("LogArgs changed the real argv")
	}
}
