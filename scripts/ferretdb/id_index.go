package main

// FerretDB v1.24's SQLite backend looks documents up by `_id` with the
// expression `_ferretdb_sjson->'$._id'`: a find whose filter is `_id` alone,
// and the UPDATE and DELETE that every update, replace and delete ends with.
// The unique index it creates for `_id` is on `_ferretdb_sjson->"_id"`, the
// same value written another way, and SQLite uses an index on an expression
// only for a query that writes the expression the same way. So each of those
// statements reads the whole table: a read or write of one archived session
// read every archive's content (tens of kilobytes each), 65 ms with 163 of
// them, where an index answers in microseconds (docs/performance.md,
// "FerretDB looks up by _id without an index").
//
// This keeps a second index, on the expression those statements use, on
// every collection's table: for the tables there are at start before FerretDB
// listens, then for new ones every few seconds. FerretDB does not know of it
// (its listIndexes reads its own metadata) and SQLite drops it with its table.

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"time"

	_ "modernc.org/sqlite"
)

// idLookupSuffix names the index this program adds to a table.
const idLookupSuffix = "__id_lookup"

// tableName is what FerretDB names tables (the collection name and a hash); anything else is left alone.
var tableName = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)

// ensureIDIndexes adds the lookup index to every collection table of every
// database file in dir that lacks it, and returns how many it added.
func ensureIDIndexes(ctx context.Context, dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sqlite"))
	if err != nil {
		return 0, err
	}
	added := 0
	for _, file := range files {
		n, err := ensureFileIDIndexes(ctx, file)
		added += n
		if err != nil {
			return added, fmt.Errorf("%s: %w", filepath.Base(file), err)
		}
	}
	return added, nil
}

func ensureFileIDIndexes(ctx context.Context, file string) (int, error) {
	// mode=rw: a database dropped meanwhile is not created again. The busy
	// timeout waits for FerretDB's writes instead of failing beside them.
	dsn := (&url.URL{Scheme: "file", Path: file, RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	// A database file FerretDB is still creating has no metadata table yet: the next pass sees it.
	rows, err := db.QueryContext(ctx, `SELECT t.table_name FROM _ferretdb_collections t
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'index' AND m.name = t.table_name || ?)`, idLookupSuffix)
	if err != nil {
		return 0, nil
	}
	var missing []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			rows.Close()
			return 0, err
		}
		if tableName.MatchString(table) {
			missing = append(missing, table)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}

	added := 0
	for _, table := range missing {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, table+idLookupSuffix, table)
		if _, err := db.ExecContext(ctx, q); err != nil {
			// The collection was dropped between the two statements: nothing to index.
			var exists int
			if db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&exists) == nil && exists == 0 {
				continue
			}
			return added, fmt.Errorf("indexing %s: %w", table, err)
		}
		added++
	}
	return added, nil
}

// keepIDIndexes runs ensureIDIndexes every interval until ctx ends; failures are logged, never fatal.
func keepIDIndexes(ctx context.Context, dir string, every time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if n, err := ensureIDIndexes(ctx, dir); err != nil && ctx.Err() == nil {
				logger.Warn("could not add an _id lookup index", slog.String("error", err.Error()))
			} else if n > 0 {
				logger.Debug("added _id lookup indexes", slog.Int("count", n))
			}
		}
	}
}
