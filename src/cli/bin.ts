import { main } from './main.js';

// The `forecourt` command's body: bin/forecourt.js runs the compiled copy (dist/cli/bin.js);
// `npm run dev` runs this source through tsx.
process.exitCode = await main(process.argv.slice(2));
