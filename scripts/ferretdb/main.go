// Command ferretdb-local runs FerretDB v1 with its SQLite backend as an
// embedded library. Installing FerretDB's own command from the module proxy
// panics on a missing version file, so we embed the library instead.
//
// Telemetry stays off without a flag: the embedded package keeps its state in
// memory with telemetry disabled and locked, and FerretDB's telemetry reporter
// and OTLP exporter are only set up by its own cmd/ferretdb, which this
// program does not link (check with `go list -deps . | grep telemetry`).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("sqlite-dir", "", "directory for the SQLite data files")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	flag.Parse()

	// FerretDB logs every connection at info and every unsupported command
	// (the drivers' endSessions on close) at warn, which grows the log of a
	// long-lived dev server quickly; callers choose how much they want.
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-local: bad --log-level %q: %v\n", *logLevel, err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb-local: --sqlite-dir is required")
		os.Exit(2)
	}
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-local: bad --sqlite-dir %s: %v\n", *dataDir, err)
		os.Exit(2)
	}
	// FerretDB hands the path to SQLite as a raw URI, so these characters
	// would be read as URI syntax and the data written somewhere else.
	if strings.ContainsAny(dir, "?#%") {
		fmt.Fprintf(os.Stderr, "ferretdb-local: --sqlite-dir %s must not contain '?', '#' or '%%'\n", dir)
		os.Exit(2)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-local: cannot create %s: %v\n", dir, err)
		os.Exit(1)
	}

	sqliteURL := (&url.URL{Scheme: "file", Path: dir + "/"}).String()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Tables there already get their _id lookup index before anyone writes beside the build (id_index.go).
	if n, err := ensureIDIndexes(ctx, dir); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-local: warning: could not add an _id lookup index: %v\n", err)
	} else if n > 0 {
		fmt.Printf("ferretdb-local: added an _id lookup index to %d table(s)\n", n)
	}
	go keepIDIndexes(ctx, dir, 2*time.Second, logger)

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-local: %v\n", err)
		os.Exit(1)
	}

	fmt.Printf("ferretdb-local: listening on %s, data in %s\n", *listen, dir)
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "ferretdb-local: %v\n", err)
		os.Exit(1)
	}
}
