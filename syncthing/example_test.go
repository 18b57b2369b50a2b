package syncthing_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/syncthing"
)

// A daemon finds the local Syncthing through its config.xml, checks the
// backlog on disk, then follows the event streams.
func ExampleWatcher() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	_, gui, err := syncthing.FindConfig() // the default locations
	if err != nil {
		log.Fatal(err)
	}
	client, err := syncthing.NewClient(gui.URL(), gui.APIKey)
	if err != nil {
		log.Fatal(err)
	}
	folders, err := client.Folders(ctx)
	if err != nil {
		log.Fatal(err) // says "API key rejected" for a wrong key, never the key
	}
	st, err := client.SystemStatus(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range folders {
		found, err := hive.ScanConflicts(ctx, f.AbsPath(st.Tilde))
		if err != nil {
			slog.Warn("scan for conflict copies", "err", err)
		}
		for _, c := range found {
			fmt.Println("conflict copy already on disk:", c.Path)
		}
	}

	w := syncthing.NewWatcher(client, func(ctx context.Context, ev syncthing.ConflictEvent) {
		fmt.Printf("%s %s (original %s, winner %s)\n", ev.Action, ev.Path, ev.Original, ev.Winner.DisplayName())
	}, syncthing.WatcherOptions{})
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
