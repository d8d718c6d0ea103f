// hubhost-dev: the `hubhost` command with the live preview's HTTP server linked in. `hubhost dev` replaces itself
// with this executable (see HubCLI's DevFrontEnd); every other command behaves exactly as in `hubhost`.
import HubCLI

DevFrontEnd.serve = PreviewFrontEnd.serve
HubHostCommand.start()
