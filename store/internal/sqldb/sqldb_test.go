package sqldb

import "testing"

// SQLite gets anonymous ? when the placeholders are $1, $2, … in order, and
// numbered ?n otherwise (a repeated or out-of-order one); PostgreSQL keeps
// the query as written.
func TestPlaceholders(t *testing.T) {
	lite, pg := &DB{}, &DB{D: Dialect{Dollar: true}}
	for in, want := range map[string]string{
		"SELECT a FROM t WHERE x = $1 AND y = $2":      "SELECT a FROM t WHERE x = ? AND y = ?",
		"SELECT (SELECT $1), (SELECT $1)":              "SELECT (SELECT ?1), (SELECT ?1)",
		"UPDATE t SET a = $2 WHERE b = $1":             "UPDATE t SET a = ?2 WHERE b = ?1",
		"INSERT INTO t VALUES ($1,$2),($3,$4),($5,$6)": "INSERT INTO t VALUES (?,?),(?,?),(?,?)",
		"SELECT x FROM t WHERE a = $10 AND b = $11":    "SELECT x FROM t WHERE a = ?10 AND b = ?11",
		"SELECT 1": "SELECT 1",
	} {
		for range 2 { // the second answer comes from the cache
			if got := lite.q(in); got != want {
				t.Errorf("SQLite q(%q) = %q, want %q", in, got, want)
			}
		}
		if got := pg.q(in); got != in {
			t.Errorf("PostgreSQL q(%q) = %q", in, got)
		}
	}
	if got := lite.InsertSQL("t (a, b)", 2, 3); got != "INSERT INTO t (a, b) VALUES (?,?),(?,?),(?,?)" {
		t.Errorf("SQLite InsertSQL = %q", got)
	}
	if got := pg.InsertSQL("t (a, b)", 2, 2); got != "INSERT INTO t (a, b) VALUES ($1,$2),($3,$4)" {
		t.Errorf("PostgreSQL InsertSQL = %q", got)
	}
}
