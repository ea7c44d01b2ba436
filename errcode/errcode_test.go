package errcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

var testCode = New(Def{Name: "WHARF_TEST_ONLY_CODE", Text: "test failure", Exit: ExitUsage, Class: Fatal,
	Section: "Test", Meaning: "only in this package's tests"})

// A code of each class, for these tests only (testCode, in errcode_test.go, is Fatal).
var (
	testOutcome   = testDef("WHARF_TEST_CLASS_OUTCOME", Outcome)
	testTransient = testDef("WHARF_TEST_CLASS_TRANSIENT", Transient)
	testPoison    = testDef("WHARF_TEST_CLASS_POISON", Poison)
	testOperator  = testDef("WHARF_TEST_CLASS_OPERATOR", Operator)
)

func testDef(name string, c Class) *Code {
	return New(Def{Name: name, Text: name, Exit: ExitFailed, Class: c, Section: "Test", Meaning: "only in this package's tests"})
}

func TestOfFindsTheCodeThroughWrapping(t *testing.T) {
	cause := errors.New("disk on fire")
	err := fmt.Errorf("outer: %w", E("write", "a/b", testCode, cause))
	if Of(err) != testCode || NameOf(err) != "WHARF_TEST_ONLY_CODE" {
		t.Fatalf("Of = %v, NameOf = %q", Of(err), NameOf(err))
	}
	if !errors.Is(err, testCode) || !errors.Is(err, cause) {
		t.Fatal("errors.Is misses the code or the cause")
	}
	if got, want := err.Error(), "outer: write a/b: test failure: disk on fire"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if Of(context.Canceled) != nil || NameOf(nil) != "" {
		t.Fatal("an error without a code has one")
	}
	if c, ok := Lookup("WHARF_TEST_ONLY_CODE"); !ok || c != testCode || c.Exit() != ExitUsage {
		t.Fatal("Lookup does not find the code")
	}
}

func TestNewRefusesBadDefinitions(t *testing.T) {
	for name, d := range map[string]Def{
		"duplicate": {Name: "WHARF_TEST_ONLY_CODE", Text: "x", Exit: 1, Class: Fatal, Section: "s", Meaning: "m"},
		"bad name":  {Name: "wharf_lower", Text: "x", Exit: 1, Class: Fatal, Section: "s", Meaning: "m"},
		"bad exit":  {Name: "WHARF_TEST_EXIT_3", Text: "x", Exit: 3, Class: Fatal, Section: "s", Meaning: "m"},
		"no text":   {Name: "WHARF_TEST_NO_TEXT", Exit: 1, Class: Fatal, Section: "s", Meaning: "m"},
		"no class":  {Name: "WHARF_TEST_NO_CLASS", Text: "x", Exit: 1, Section: "s", Meaning: "m"},
		"bad class": {Name: "WHARF_TEST_BAD_CLASS", Text: "x", Exit: 1, Class: Fatal + 1, Section: "s", Meaning: "m"},
		"unclassed": {Name: "WHARF_TEST_UNCLASSIFIED", Text: "x", Exit: 1, Class: Unclassified, Section: "s", Meaning: "m"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("New(%+v) did not panic", d)
				}
			}()
			New(d)
		})
	}
}

func TestAllKeepsDefinitionOrder(t *testing.T) {
	all := All()
	if len(all) == 0 || all[0] != testCode {
		t.Fatalf("All() = %v", all)
	}
}
