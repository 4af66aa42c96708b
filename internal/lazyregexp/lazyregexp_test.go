package lazyregexp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestCompiledOnFirstUseOutsideTests(t *testing.T) {
	was := inTest
	inTest = false
	defer func() { inTest = was }()

	bad := New(`(`) // would panic at once if compiled
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern did not panic at its first use")
		}
	}()
	bad.MatchString("x")
}

func TestCompiledAtOnceInTests(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern did not panic at New in a test binary")
		}
	}()
	New(`(`)
}

func TestSameAnswersAsRegexp(t *testing.T) {
	const expr, text = `(a+)(b?)`, "xaab ab a"
	lazy, re := New(expr), regexp.MustCompile(expr)
	up := func(s string) string { return strings.ToUpper(s) }
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"Match", lazy.Match([]byte(text)), re.Match([]byte(text))},
		{"MatchString", lazy.MatchString(text), re.MatchString(text)},
		{"FindString", lazy.FindString(text), re.FindString(text)},
		{"FindStringIndex", lazy.FindStringIndex(text), re.FindStringIndex(text)},
		{"FindStringSubmatch", lazy.FindStringSubmatch(text), re.FindStringSubmatch(text)},
		{"FindAll", lazy.FindAll([]byte(text), -1), re.FindAll([]byte(text), -1)},
		{"FindAllString", lazy.FindAllString(text, -1), re.FindAllString(text, -1)},
		{"FindAllStringIndex", lazy.FindAllStringIndex(text, -1), re.FindAllStringIndex(text, -1)},
		{"FindAllStringSubmatch", lazy.FindAllStringSubmatch(text, -1), re.FindAllStringSubmatch(text, -1)},
		{"FindAllStringSubmatchIndex", lazy.FindAllStringSubmatchIndex(text, -1), re.FindAllStringSubmatchIndex(text, -1)},
		{"ReplaceAll", lazy.ReplaceAll([]byte(text), []byte("<$1>")), re.ReplaceAll([]byte(text), []byte("<$1>"))},
		{"ReplaceAllStringFunc", lazy.ReplaceAllStringFunc(text, up), re.ReplaceAllStringFunc(text, up)},
		{"String", lazy.String(), re.String()},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if first := lazy.Regexp(); first != lazy.Regexp() {
		t.Error("Regexp compiled twice")
	}
	if !slices.Equal(lazy.Regexp().SubexpNames(), re.SubexpNames()) {
		t.Error("Regexp differs from the expression")
	}
}

func ExampleNew() {
	// At package level: compiled when first matched, not at start-up.
	var ticket = New(`[A-Z]+-[0-9]+`)
	fmt.Println(ticket.FindString("fixes ACP-42 and more"))
	// Output: ACP-42
}
