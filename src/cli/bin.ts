import { main } from './main.js';

// The `forecourt` command's body: bin/forecourt.js runs the compiled copy (dist/cli/bin.js);
// `npm run dev` runs this source through tsx.
const code = await main(process.argv.slice(2));
// A command that failed ends now: left to the event loop, a logger still retrying a full stdout
// (a reader that stopped) would keep the process alive. A started service sets its own exit.
if (code !== 0) process.exit(code);
process.exitCode = code;
