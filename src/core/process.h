// Process-wide settings tessel makes once, for every program that uses it
// (the CLI and applications of the API alike).
#pragma once

namespace tessel {

// Large buffers (weights, arenas, packed copies) get their own mappings,
// returned to the system as soon as they are freed. glibc would otherwise
// raise its mmap threshold after the first large free (a model file's
// bytes) and serve later weights from the heap, whose freed holes stay
// resident: packing weights would then hold them twice. Called when a model
// is compiled or loaded; the first call sets it (M_MMAP_THRESHOLD = 256 KiB,
// which also stops glibc's dynamic threshold), later ones do nothing.
void ConfigureAllocatorOnce();

}  // namespace tessel
