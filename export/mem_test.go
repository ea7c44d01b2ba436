package export

import (
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

func memNew() *store.Store { return store.New(mem.New(), nil) }
