import { parseArgs } from 'node:util';
import { DATE_ORDERS, type DateOrder } from './dates.js';
import { type Encoding, encodingOption } from './encoding.js';
import { UsageError } from './errors.js';
import { FORMAT_NAME, type NumberFormat, numberFormatOption } from './numbers.js';

export const IMPORT_USAGE = `Usage: forecourt import <feed.csv|feed.json> --url URL --secret SECRET [options]

Uploads a feed of listings to the Forecourt partner API in batches of 100 (docs/import.md).

  --url URL             the service, e.g. https://api.example.com   (or FORECOURT_URL)
  --secret SECRET       an API secret with write:listings          (or FORECOURT_SECRET)
  --ca FILE             a PEM certificate to trust (self-signed)   (or FORECOURT_CA)
  --dry-run             validate every listing on the service, write nothing
  --mark-missing-sold   the feed is your whole stock: your unsold listings missing from it
                        are marked sold (refused above 20% of them without --force)
  --force               with --mark-missing-sold: go ahead above 20%
  --location CODE       the location (its code) of every row that names none: a row's own
                        dealerLocationCode or dealerProfileId wins. With --mark-missing-sold
                        also: the feed is the stock of this location only (repeatable there);
                        your listings elsewhere are left alone
  --locations-from-feed with --mark-missing-sold: the feed is the stock of the locations it names
  --all-locations       with --mark-missing-sold: the feed is your stock at every location
                        (without one of these three, a feed naming only some of your locations
                        is refused when it would mark listings elsewhere sold)
  --map FILE            a JSON map of your feed's values to ours, per field, applied before
                        sending, e.g. {"fuelType": {"Stoom": "other", "BZ": "petrol"}}
  --columns FILE        a JSON map of your column names to listing fields, for names the tool
                        does not know, e.g. {"Stock nr": "externalReference", "Pk": null}
  --number-format F     how the feed writes numbers: 1.234,56 or 1,234.56 (default: read from
                        each column; a value like 39.990 that no other value explains is refused)
  --date-order O        how dates write day, month and year: dmy (default: 15/03/2021,
                        15-03-2021, 03/2021), mdy (03/15/2021) or ymd (2021/03/15); ISO
                        2021-03-15 is always read
  --title TEMPLATE      make every row's title from its fields, e.g. "{brand} {model} {variant}"
                        (a {field} or {Column name}); without a title column this is the default
  --report FILE         the CSV of failed listings (default <feed>.import-report.csv)
  --batch-size N        listings per request, 1 to 100 (default 100)
  --delimiter C         CSV delimiter: ';' ',' '|' or 'tab' (default: detected from the header)
  --encoding E          CSV encoding: utf-8, windows-1252 (cp1252) or iso-8859-15 (latin-9)
                        (default: detected, and said at the start of the run)
  --restart             ignore the saved progress and send the whole feed again
  -h, --help            this text

A run that stops (Ctrl-C, network, service down) keeps its progress in <feed>.import-state.json;
the same command again resumes after the last batch the service answered.

Exit codes: 0 every listing accepted; 1 some listings failed (see the report); 2 the run could not
start or stopped before the end (bad options or feed, authentication, network, --mark-missing-sold
refused); 130 interrupted.
`;

const OPTIONS = {
  url: { type: 'string' },
  secret: { type: 'string' },
  ca: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  'mark-missing-sold': { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  location: { type: 'string', multiple: true },
  'locations-from-feed': { type: 'boolean', default: false },
  'all-locations': { type: 'boolean', default: false },
  map: { type: 'string' },
  columns: { type: 'string' },
  'number-format': { type: 'string' },
  report: { type: 'string' },
  'batch-size': { type: 'string', default: '100' },
  delimiter: { type: 'string' },
  encoding: { type: 'string' },
  'date-order': { type: 'string' },
  title: { type: 'string' },
  restart: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export interface Settings {
  feedPath: string;
  url: string;
  secret: string;
  ca: string | undefined;
  dryRun: boolean;
  markMissingSold: boolean;
  force: boolean;
  /** Which locations --mark-missing-sold covers: chosen codes, 'feed', 'all', or not chosen. */
  locations: string[] | 'feed' | 'all' | undefined;
  /** --location given once: the location of rows that name none. */
  defaultLocation: string | undefined;
  dateOrder: DateOrder | undefined;
  title: string | undefined;
  mapPath: string | undefined;
  columnsPath: string | undefined;
  numberFormat: NumberFormat | undefined;
  reportPath: string;
  statePath: string;
  batchSize: number;
  delimiter: string | undefined;
  encoding: Encoding | undefined;
  restart: boolean;
}

export function settings(argv: string[], env: Record<string, string | undefined>): Settings | 'help' {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length ? `unexpected argument "${positionals[1]}"` : 'missing the feed file',
    );
  }
  const url = values.url ?? env.FORECOURT_URL;
  const secret = values.secret ?? env.FORECOURT_SECRET;
  if (!url) throw new UsageError('missing --url (or FORECOURT_URL)');
  if (!secret) throw new UsageError('missing --secret (or FORECOURT_SECRET)');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url "${url}" is not a URL (e.g. https://api.example.com)`);
  }
  const batchSize = Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100) {
    throw new UsageError(`--batch-size must be a whole number from 1 to 100, got "${values['batch-size']}"`);
  }
  const delimiter = values.delimiter === 'tab' ? '\t' : values.delimiter;
  if (delimiter !== undefined && ![';', ',', '\t', '|'].includes(delimiter)) {
    throw new UsageError(`--delimiter must be ';', ',', '|' or 'tab', got "${values.delimiter}"`);
  }
  const encoding = values.encoding === undefined ? undefined : encodingOption(values.encoding);
  if (values.encoding !== undefined && !encoding) {
    throw new UsageError(
      `--encoding must be utf-8, windows-1252 (or cp1252) or iso-8859-15 (or latin-9), got "${values.encoding}"`,
    );
  }
  const dateOrder = values['date-order']?.toLowerCase() as DateOrder | undefined;
  if (dateOrder !== undefined && !DATE_ORDERS.includes(dateOrder)) {
    throw new UsageError(
      `--date-order must be dmy (15/03/2021), mdy (03/15/2021) or ymd (2021/03/15), got "${values['date-order']}"`,
    );
  }
  const numberFormat =
    values['number-format'] === undefined ? undefined : numberFormatOption(values['number-format']);
  if (values['number-format'] !== undefined && !numberFormat) {
    throw new UsageError(
      `--number-format must be ${FORMAT_NAME.comma} (dot for thousands, decimal comma) or ` +
        `${FORMAT_NAME.dot} (comma for thousands, decimal point), got "${values['number-format']}"`,
    );
  }
  // --location alone names the feed's default location; several only say what --mark-missing-sold covers.
  if ((values.location?.length ?? 0) > 1 && !values['mark-missing-sold']) {
    throw new UsageError(
      '--location CODE names the location of rows without one: give it once (several only with --mark-missing-sold)',
    );
  }
  for (const option of ['force', 'locations-from-feed', 'all-locations'] as const) {
    const given = Array.isArray(values[option]) ? values[option].length > 0 : values[option] === true;
    if (given && !values['mark-missing-sold']) {
      throw new UsageError(`--${option} only applies to --mark-missing-sold`);
    }
  }
  const choices = [values.location?.length, values['locations-from-feed'], values['all-locations']].filter(
    Boolean,
  );
  if (choices.length > 1) {
    throw new UsageError('choose one of --location, --locations-from-feed and --all-locations');
  }
  const feedPath = positionals[0]!;
  return {
    feedPath,
    url,
    secret,
    ca: values.ca ?? env.FORECOURT_CA,
    dryRun: values['dry-run'],
    markMissingSold: values['mark-missing-sold'],
    force: values.force,
    defaultLocation: values.location?.length === 1 ? values.location[0] : undefined,
    dateOrder,
    title: values.title,
    locations: values.location?.length
      ? values.location
      : values['locations-from-feed']
        ? 'feed'
        : values['all-locations']
          ? 'all'
          : undefined,
    mapPath: values.map,
    columnsPath: values.columns,
    numberFormat,
    reportPath: values.report ?? `${feedPath}.import-report.csv`,
    statePath: `${feedPath}.import-state.json`,
    batchSize,
    delimiter,
    encoding,
    restart: values.restart,
  };
}
