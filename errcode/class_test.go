package errcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestClassOfFindsTheClassThroughWrapping(t *testing.T) {
	plain := errors.New("disk on fire")
	for name, tc := range map[string]struct {
		err  error
		want Class
	}{
		"the code itself":       {testTransient, Transient},
		"an Error":              {E("put", "k", testPoison, plain), Poison},
		"wrapped by fmt":        {fmt.Errorf("ship: %w", E("put", "k", testOperator, nil)), Operator},
		"wrapped twice":         {fmt.Errorf("a: %w", fmt.Errorf("b: %w", testOutcome)), Outcome},
		"a cause raises a code": {E("write", "part", testTransient, E("put", "part", testOperator, plain)), Operator},
		"a cause never lowers":  {E("write", "part", testOperator, E("get", "k", testTransient, plain)), Operator},
		"fatal deep inside":     {fmt.Errorf("x: %w", E("a", "", testPoison, fmt.Errorf("y: %w", testCode))), Fatal},
		"joined: the worst":     {errors.Join(E("run", "", testTransient, nil), plain, E("journal", "", testOperator, nil)), Operator},
		"joined, wrapped":       {fmt.Errorf("export: %w", errors.Join(testPoison, testTransient)), Poison},
		"joined with a fatal":   {errors.Join(testCode, testOperator), Fatal},
		"an outcome beside":     {errors.Join(testOutcome, testTransient), Transient},
		"a plain error":         {plain, Unclassified},
		"joined plain errors":   {errors.Join(plain, errors.New("more")), Unclassified},
		"a plain error wrapped": {fmt.Errorf("read: %w", plain), Unclassified},
		"a context error":       {fmt.Errorf("get: %w", context.Canceled), Unclassified},
		"nil":                   {nil, Unclassified},
	} {
		if got := ClassOf(tc.err); got != tc.want {
			t.Errorf("%s: ClassOf(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}

func TestClassesAreOrderedNamedAndExplained(t *testing.T) {
	want := []string{"outcome", "transient", "poison", "operator", "fatal"}
	if len(Classes) != len(want) {
		t.Fatalf("Classes = %v, want %v", Classes, want)
	}
	for i, c := range Classes {
		if c.String() != want[i] || c.Meaning() == "" || (i > 0 && c <= Classes[i-1]) {
			t.Errorf("class %d: %q (meaning %q), want %q, more severe than the one before", i, c, c.Meaning(), want[i])
		}
	}
	if Unclassified.String() != "unclassified" || Unclassified.Meaning() != "" || Class(99).String() != "unclassified" {
		t.Error("Unclassified is named or explained as a class of codes")
	}
	if testPoison.Class() != Poison || testCode.Doc().Class != Fatal {
		t.Error("a code does not carry its class")
	}
}
