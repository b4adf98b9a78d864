package profile

// mergeBy adds each element of src to *dst: to the element of *dst that
// same finds it the same as, with add, or as a new element at the end when
// there is none. The merges of profiles use it for their keyed lists.
func mergeBy[T any](dst *[]T, src []T, same func(a, b *T) bool, add func(into, from *T)) {
	for i := range src {
		x := &src[i]
		j := -1
		for k := range *dst {
			if same(&(*dst)[k], x) {
				j = k
				break
			}
		}
		if j < 0 {
			*dst = append(*dst, *x)
			continue
		}
		add(&(*dst)[j], x)
	}
}
