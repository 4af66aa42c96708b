package appserver

import (
	"context"
	"fmt"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// ListSkills asks a running app-server for the enabled skills codex has
// for cwd (`skills/list {cwds: [cwd]}`): repository skills
// (.agents/skills/…), the user's, the system's and the admin's. codexacp
// does not look for skills itself: codex decides what a skill is.
func ListSkills(ctx context.Context, server *Server, cwd string) ([]codex.Skill, error) {
	res, err := Call(ctx, server, protocol.SkillsList, protocol.SkillsListParams{Cwds: []string{cwd}})
	if err != nil {
		return nil, fmt.Errorf("codex app-server: skills/list: %w", err)
	}
	var skills []codex.Skill
	for _, entry := range res.Data {
		for _, s := range entry.Skills {
			if s.Enabled && s.Name != "" {
				skills = append(skills, codex.Skill{Name: s.Name, Description: s.Description, Path: s.Path, Scope: s.Scope})
			}
		}
	}
	return skills, nil
}
