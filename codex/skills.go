package codex

// Skill is a skill codex lists for a workspace (app-server skills/list).
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Path        string `json:"path,omitempty"`  // its SKILL.md
	Scope       string `json:"scope,omitempty"` // repo, user, system or admin
}
