fn main() {
    std::process::exit(toolpick::cli::main());
}
