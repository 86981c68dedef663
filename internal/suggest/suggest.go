// Package suggest finds the known name a mistyped one was probably meant to
// be: a flag, a subcommand, an environment variable. Errors about unknown
// names add its suggestion ("did you mean -nodes?").
package suggest

// Nearest returns the candidate closest to got by edit distance
// (transpositions count as one edit), and false when none is close enough
// to be a likely typo: at most 3 edits, and fewer than half of got's
// length plus 2. Ties go to the earlier candidate.
func Nearest(got string, candidates []string) (string, bool) {
	return Within(got, candidates, min(3, len(got)/2+1))
}

// Within returns the candidate closest to got, and false when none is at
// most edits away. Ties go to the earlier candidate. It is for names checked
// among others' (a process environment), where Nearest's allowance would
// take an unrelated name for a typo.
func Within(got string, candidates []string, edits int) (string, bool) {
	best, bestD := "", edits+1
	for _, c := range candidates {
		if d := distance(got, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// DidYouMean returns "; did you mean X?" for the nearest candidate, with
// prefix before it (a flag's "-"), or "" when none is close.
func DidYouMean(got string, candidates []string, prefix string) string {
	best, ok := Nearest(got, candidates)
	if !ok {
		return ""
	}
	return "; did you mean " + prefix + best + "?"
}

// distance is the optimal-string-alignment (restricted Damerau-Levenshtein)
// distance, so "nodse" is one edit from "nodes".
func distance(a, b string) int {
	n, m := len(a), len(b)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := 0; j <= m; j++ {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[n][m]
}
