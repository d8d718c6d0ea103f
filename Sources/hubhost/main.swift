// hubhost: a headless Hub Framework component host that loads plugins (.so) through a versioned C ABI.
// The commands live in HubCLI; `hubhost dev` continues in the `hubhost-dev` executable (see DevFrontEnd).
import HubCLI

HubHostCommand.start()
