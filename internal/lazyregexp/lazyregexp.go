// Package lazyregexp is a regular expression compiled on its first use, not
// at package initialisation: every package-level pattern compiled at init
// adds to the agent's start, which an editor waits for before initialize is
// answered, while most patterns serve rare paths (recording, secrets in
// logs). Test binaries compile at once so that a bad pattern still fails
// every test run of its package.
package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Regexp is a regexp.Regexp compiled when first used.
type Regexp struct {
	expr string
	re   func() *regexp.Regexp
}

// inTest is whether this is a test binary (named *.test by go test).
var inTest = len(os.Args) > 0 && strings.HasSuffix(strings.TrimSuffix(os.Args[0], ".exe"), ".test")

// New returns expr, to be compiled by regexp.MustCompile on its first use;
// at once in a test binary.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
	if inTest {
		r.re()
	}
	return r
}

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }

func (r *Regexp) Match(b []byte) bool                    { return r.re().Match(b) }
func (r *Regexp) MatchString(s string) bool              { return r.re().MatchString(s) }
func (r *Regexp) FindString(s string) string             { return r.re().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int         { return r.re().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string   { return r.re().FindStringSubmatch(s) }
func (r *Regexp) FindAll(b []byte, n int) [][]byte       { return r.re().FindAll(b, n) }
func (r *Regexp) FindAllString(s string, n int) []string { return r.re().FindAllString(s, n) }
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.re().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.re().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAll(src, repl []byte) []byte { return r.re().ReplaceAll(src, repl) }
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
