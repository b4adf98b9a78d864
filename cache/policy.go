package cache

import (
	"fmt"
	"slices"
)

// Policy is the state of a replacement policy for one cache of sets × ways
// slots (slot = set × ways + way). The Cache fills a set's invalid ways
// itself, lowest first, and asks Victim only when the set is full. Each
// policy is one file that registers itself (see register).
//
// The engine counts repeated hits without telling the cache (its hit
// bypass), which is exact for every policy that keeps this contract, which
// TestPolicyContract checks for every registered policy:
//   - what a Hit does depends only on its set's state, which only Hit,
//     Fill, Remove and Victim on that set change;
//   - Hit(a) twice in a row leaves the state as one Hit(a) does;
//   - Hit(a), Hit(b), Hit(a) leaves the state as Hit(b), Hit(a) does
//     (two lines used in turn: only the last two uses count);
//   - Remove(b) does not change what a later Hit(a) does (a != b), nor
//     does a Victim returning b (the Cache forgets its last uses after
//     any other Victim);
//   - if FillIsUse, Fill(a) leaves the state as Fill(a), Hit(a) does.
type Policy interface {
	// Hit records a use of the valid slot.
	Hit(slot int)
	// Fill records that slot, empty before, now holds a line.
	Fill(slot int)
	// Remove records that the valid slot is emptied (evicted or
	// invalidated).
	Remove(slot int)
	// Victim returns the slot to replace in set, whose ways are all valid.
	// It may age the set's state (srrip).
	Victim(set int) int
	// AgeOrder appends the slots of set, oldest first (the order of the
	// final flush), and returns dst; it may list empty slots, which the
	// Cache skips.
	AgeOrder(set int, dst []int) []int
	// FillIsUse reports whether a fill leaves a line as a hit would.
	FillIsUse() bool
}

// newPolicyFunc returns a policy's state for sets × ways slots; seed drives
// policies that draw random numbers.
type newPolicyFunc func(sets, ways int, seed uint64) (Policy, error)

// registration is a registered policy: its constructor, and whether it
// draws random numbers from the cache's seed.
type registration struct {
	new    newPolicyFunc
	seeded bool
}

// policies are the registered policies by name: the one list of the
// replacement policies (package machine validates against it).
var policies = map[string]registration{}

// register makes a policy available by name; each policy's file calls it
// from init. seeded says that it draws random numbers from the seed.
func register(name string, f newPolicyFunc, seeded bool) {
	if _, dup := policies[name]; dup {
		panic("cache: policy " + name + " registered twice")
	}
	policies[name] = registration{f, seeded}
}

// DefaultPolicy is the policy of a cache that names none.
const DefaultPolicy = "lru"

// Policies returns the names of the replacement policies, sorted.
func Policies() []string {
	out := make([]string, 0, len(policies))
	for name := range policies {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// IsPolicy reports whether name is a replacement policy.
func IsPolicy(name string) bool {
	_, ok := policies[name]
	return ok
}

// Seeded reports whether the policy called name draws random numbers from
// the cache's seed.
func Seeded(name string) bool { return policies[name].seeded }

// newPolicy returns the state of the policy called name ("": DefaultPolicy).
func newPolicy(name string, sets, ways int, seed uint64) (Policy, error) {
	if name == "" {
		name = DefaultPolicy
	}
	r, ok := policies[name]
	if !ok {
		return nil, fmt.Errorf("cache: unknown replacement policy %q", name)
	}
	return r.new(sets, ways, seed)
}

// wayOrder appends the slots of set in way order: the age order of the
// policies that keep none.
func wayOrder(set, ways int, dst []int) []int {
	for s := set * ways; s < (set+1)*ways; s++ {
		dst = append(dst, s)
	}
	return dst
}
