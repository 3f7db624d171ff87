package sqldb

import "database/sql"

// Collect reads every row of rows with one, in order, and closes rows.
// one is usually the store's scanX(Scanner) function, the same one its
// single-row reads use. The result is never nil (JSON [] rather than null).
func Collect[T any](rows *sql.Rows, one func(Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := one(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn for every row of rows, stopping at its first error, and
// closes rows: for reads that fill a map or skip rows.
func Each(rows *sql.Rows, fn func(Scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ScanOne reads a row of one column.
func ScanOne[T any](sc Scanner) (T, error) {
	var v T
	err := sc.Scan(&v)
	return v, err
}
