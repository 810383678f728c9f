package corpus

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// MaxImportNotes is the most notes one vault import may hold.
const MaxImportNotes = 5000

// ImportItem is one note of a vault import.
type ImportItem struct {
	// Ref names the item inside the import so others can sit under it (the
	// vault path without ".md" for a zip, e.g. "software/project"); optional
	// for items nothing sits under.
	Ref string
	// ParentRef places the item under the item with that Ref; empty places it
	// at the import's root (under ImportInput.ParentID when set).
	ParentRef string
	Fields
}

// ImportInput is a whole vault import.
type ImportInput struct {
	// ParentID, when set, is an existing note the import's root items go
	// under.
	ParentID *uuid.UUID
	Items    []ImportItem
}

// Imported is one note an import created.
type Imported struct {
	Ref  string
	Note Note
}

// ImportResult is what an import created, in creation order (parents first).
type ImportResult struct {
	Notes []Imported
}

// VaultImportedData is the data of vault.imported.
type VaultImportedData struct {
	Notes     int        `json:"notes"`
	Published int        `json:"published"`
	ParentID  *uuid.UUID `json:"parent_id"`
}

// Import creates many notes in one transaction and records vault.imported
// once. Either every note is created or none is. Items are validated like
// Create's input; parents are resolved by Ref and created before their
// children; the placement rules of Create hold (depth, raw rule). Per-note
// writing.published events are not recorded: the import is one fact, and
// each row's corpus.note.changed still comes from the trigger.
func (s *Service) Import(ctx context.Context, ownerID uuid.UUID, in ImportInput) (ImportResult, error) {
	plan, err := planImport(in.Items)
	if err != nil {
		return ImportResult{}, err
	}
	var out ImportResult
	err = s.uow.Do(ctx, func(tx Tx) error {
		notes := tx.Notes()
		if err := notes.LockTree(ctx, ownerID); err != nil {
			return fmt.Errorf("lock tree: %w", err)
		}
		rootDepth, rootRaw := 0, false
		if in.ParentID != nil {
			parent, err := notes.Get(ctx, ownerID, *in.ParentID)
			if errors.Is(err, domain.ErrNotFound) {
				return domain.Unprocessable("PARENT_NOT_FOUND", "parent_id names no note of yours").WithField("parent_id")
			}
			if err != nil {
				return fmt.Errorf("load parent: %w", err)
			}
			ancestors, err := notes.Ancestors(ctx, ownerID, parent.ID)
			if err != nil {
				return fmt.Errorf("load ancestors: %w", err)
			}
			rootDepth = len(ancestors) + 1
			for _, a := range append(ancestors, parent) {
				rootRaw = rootRaw || a.Genre == GenreRaw
			}
		}
		ids := make(map[string]uuid.UUID, len(plan))
		rawAbove := map[string]bool{}
		depth := map[string]int{}
		published := 0
		for _, p := range plan {
			it := in.Items[p]
			id, err := newNoteID()
			if err != nil {
				return err
			}
			parentID := in.ParentID
			d, raw := rootDepth+1, rootRaw
			if it.ParentRef != "" {
				pid := ids[it.ParentRef]
				parentID = &pid
				d = depth[it.ParentRef] + 1
				raw = rawAbove[it.ParentRef]
			}
			field := func(f string) string { return fmt.Sprintf("notes[%d].%s", p, f) }
			if d > MaxDepth {
				return domain.Unprocessable("TOO_DEEP", fmt.Sprintf("note %q would sit %d levels deep; the limit is %d", label(it, p), d, MaxDepth)).WithField(field("parent_ref"))
			}
			if raw && it.Genre != GenreRaw {
				return domain.Unprocessable("RAW_ANCESTOR", fmt.Sprintf("note %q is not raw but sits under a raw note", label(it, p))).WithField(field("genre"))
			}
			n := Note{ID: id, OwnerID: ownerID, ParentID: parentID}
			it.Fields.apply(&n)
			stored, err := notes.Insert(ctx, n)
			if err != nil {
				return fmt.Errorf("insert note %q: %w", label(it, p), err)
			}
			if it.Ref != "" {
				ids[it.Ref], depth[it.Ref] = id, d
				rawAbove[it.Ref] = raw || it.Genre == GenreRaw
			}
			if stored.Published {
				published++
			}
			out.Notes = append(out.Notes, Imported{Ref: it.Ref, Note: stored})
		}
		data := VaultImportedData{Notes: len(out.Notes), Published: published, ParentID: in.ParentID}
		if _, err := tx.Recorder().Record(ctx, ownerID, domain.EventVaultImported, "vault", data); err != nil {
			return fmt.Errorf("record %s: %w", domain.EventVaultImported, err)
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return out, nil
}

func label(it ImportItem, i int) string {
	if it.Ref != "" {
		return it.Ref
	}
	if it.Title != "" {
		return it.Title
	}
	return fmt.Sprintf("#%d", i)
}

// planImport validates the items (normalising them in place) and returns
// their indexes in an order where every parent comes before its children.
func planImport(items []ImportItem) ([]int, error) {
	if len(items) == 0 {
		return nil, domain.Validation("EMPTY_IMPORT", "the import holds no notes").WithField("notes")
	}
	if len(items) > MaxImportNotes {
		return nil, domain.TooLarge("IMPORT_TOO_LARGE", fmt.Sprintf("an import may hold at most %d notes", MaxImportNotes)).WithField("notes")
	}
	byRef := make(map[string]int, len(items))
	for i := range items {
		if err := items[i].Fields.normalize(); err != nil {
			if de := domain.AsError(err); de != nil {
				c := *de
				c.Message = fmt.Sprintf("note %s: %s", label(items[i], i), de.Message)
				c.Field = fmt.Sprintf("notes[%d].%s", i, de.Field)
				return nil, &c
			}
			return nil, err
		}
		if ref := items[i].Ref; ref != "" {
			if _, dup := byRef[ref]; dup {
				return nil, domain.Validation("DUPLICATE_REF", fmt.Sprintf("ref %q is used twice", ref)).WithField(fmt.Sprintf("notes[%d].ref", i))
			}
			byRef[ref] = i
		}
	}
	children := map[string][]int{}
	var order []int
	for i, it := range items {
		switch {
		case it.ParentRef == "":
			order = append(order, i)
		default:
			if _, ok := byRef[it.ParentRef]; !ok {
				return nil, domain.Unprocessable("UNKNOWN_PARENT_REF", fmt.Sprintf("note %s: parent_ref %q names no note of the import", label(it, i), it.ParentRef)).WithField(fmt.Sprintf("notes[%d].parent_ref", i))
			}
			children[it.ParentRef] = append(children[it.ParentRef], i)
		}
	}
	// Breadth-first from the roots: whatever is never reached sits in a
	// cycle of parent refs.
	for k := 0; k < len(order); k++ {
		if ref := items[order[k]].Ref; ref != "" {
			order = append(order, children[ref]...)
		}
	}
	if len(order) != len(items) {
		return nil, domain.Unprocessable("IMPORT_CYCLE", "the parent refs of the import form a cycle").WithField("notes")
	}
	return order, nil
}

func importParentIDError(i int) error {
	return domain.Validation("PARENT_ID_IN_IMPORT", "a note of an import takes parent_ref (or the import's parent_id), not parent_id").
		WithField(fmt.Sprintf("notes[%d].parent_id", i))
}
