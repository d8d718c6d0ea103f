// The Render benchmark section; its owner replaces this file.
enum RenderBench { static func run() throws { print("(not written yet)") } }
