// mimalloc instead of the system allocator: reading a large trial file allocates and frees millions of
// small strings across threads, and glibc's malloc spent over half of a million-trial report in
// malloc/free (perf); see BENCHMARKS.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    toolpick::allocator::tune();
    std::process::exit(toolpick::cli::main());
}
