package record

import (
	"context"

	"github.com/codexacp/codexacp/codex"
)

// SkillLister lists the skills codex has for a workspace
// (appserver.ConfigServer.ListSkills, codexexec.Backend.ListSkills).
type SkillLister func(ctx context.Context, cwd string) ([]codex.Skill, error)

// Skills wraps list so that each answer is recorded (a skills entry): a
// replay's codex lists the same skills, in the same order.
func (r *Recorder) Skills(list SkillLister) SkillLister {
	return func(ctx context.Context, cwd string) ([]codex.Skill, error) {
		skills, err := list(ctx, cwd)
		e := &Entry{Kind: KindSkills, Cwd: cwd, Skills: skills}
		if err != nil {
			e.Error = err.Error()
		}
		r.write(e)
		return skills, err
	}
}
