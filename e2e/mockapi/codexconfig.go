package mockapi

import "strconv"

// ProviderName is the codex model provider id CodexConfig defines.
const ProviderName = "mock"

// CodexConfig returns codex -c values that route model requests to the
// Responses API at baseURL (a Server's URL) through a custom provider.
// Retries are off so that scripted failures fail at once; no env_key is set,
// so no API key is needed and no Authorization header is sent.
func CodexConfig(baseURL string) []string {
	return []string{
		"model_provider=" + ProviderName,
		"model_providers." + ProviderName + `={name="mock", base_url=` + strconv.Quote(baseURL) +
			`, wire_api="responses", request_max_retries=0, stream_max_retries=0}`,
	}
}
