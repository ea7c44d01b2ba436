package export

import "testing"

func TestQueryBody(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT 1;", "SELECT 1"},
		{"SELECT 1 ; -- nightly", "SELECT 1"},
		{"SELECT 1; -- nightly\n", "SELECT 1"},
		{"SELECT 1 -- a\n-- b\n;\n/* c */ ;;  \n", "SELECT 1"},
		{"SELECT 1\nWHERE x > 0 -- every order", "SELECT 1\nWHERE x > 0"},
		{"SELECT '--not a comment;'", "SELECT '--not a comment;'"},
		{"SELECT 'it''s;' ;", "SELECT 'it''s;'"},
		{`SELECT "a;--b" FROM t;`, `SELECT "a;--b" FROM t`},
		{"SELECT $$;--$$;", "SELECT $$;--$$"},
		{"SELECT $x$ ; $$ -- $x$ -- c", "SELECT $x$ ; $$ -- $x$"},
		{"SELECT $1 -- a parameter, not a quote", "SELECT $1"},
		{"SELECT a$b$ FROM t; -- c", "SELECT a$b$ FROM t"},
		{"SELECT /* ; */ 1 /* end */", "SELECT /* ; */ 1"},
		{"SELECT 1; SELECT 2; -- two", "SELECT 1; SELECT 2"},
		{"SELECT 'unterminated; -- x", "SELECT 'unterminated; -- x"},
		{"-- only a comment", ""},
	} {
		if got := queryBody(tc.in); got != tc.want {
			t.Errorf("queryBody(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
