// Reads an Iceberg table with icebird and prints what it read as one JSON object on stdout:
// the metadata file, the row count, each column's count of non-null values and checksum, and
// (when asked) every value in its canonical text form. See doc.go for the canonical forms;
// canonical.go computes the same from Arrow data on the Go side.
//
// Its parameters come as JSON on stdin:
//   {"dir": "<folder holding node_modules/icebird>", "table": "<table location>",
//    "metadata": "v3.metadata.json" (optional), "routes": [["<location prefix>", "<http base>"]],
//    "urls": {"<location>": "<presigned URL>"}, "values": true|false}
// Every fetch icebird makes must be of a location a route or a url serves: it is sent there
// instead; any other fetch fails, so nothing else is asked.
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const params = JSON.parse(await new Promise((resolve, reject) => {
  let s = ''
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', d => { s += d })
  process.stdin.on('end', () => resolve(s))
  process.stdin.on('error', reject)
}))
const mod = p => import(pathToFileURL(join(params.dir, 'node_modules', 'icebird', 'src', p)).href)
const { icebergMetadata, icebergRead } = await mod('index.js')
const { translateS3Url } = await mod('fetch.js')

// A route maps a location prefix to an http base, a url an exact location to its URL. Each
// also answers the https URL icebird turns an s3:// or s3a:// location into. fetched lists
// the locations fetched, as the table's metadata names them.
const routes = []
for (const [from, to] of params.routes ?? []) {
  routes.push([from, from, to])
  if (translateS3Url(from) !== from) routes.push([translateS3Url(from), from, to])
}
const urls = new Map()
for (const [location, to] of Object.entries(params.urls ?? {})) {
  urls.set(location, [location, to])
  urls.set(translateS3Url(location), [location, to])
}
const fetched = []
const realFetch = globalThis.fetch
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  if (urls.has(url)) {
    const [location, to] = urls.get(url)
    fetched.push(location)
    return realFetch(to, init)
  }
  for (const [prefix, location, to] of routes) {
    if (url.startsWith(prefix)) {
      fetched.push(location + url.slice(prefix.length))
      return realFetch(to + url.slice(prefix.length), init)
    }
  }
  return Promise.reject(new Error(`icebird fetched ${url}, which is not one of the table's files`))
}

const hex = b => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')
const f64 = new DataView(new ArrayBuffer(8))

// canonical returns the canonical text of value v of the Iceberg primitive type, or null.
function canonical(type, v) {
  if (v === null || v === undefined) return null
  if (type === 'boolean') return v ? 'true' : 'false'
  if (type === 'int' || type === 'long' || type === 'time') return BigInt(v).toString()
  if (type === 'float' || type === 'double') {
    f64.setFloat64(0, Number(v))
    return f64.getBigUint64(0).toString(16).padStart(16, '0')
  }
  if (type === 'date') return typeof v === 'number' ? String(v) : String(v.getTime() / 86400000)
  if (type === 'timestamp' || type === 'timestamptz') {
    return typeof v === 'bigint' ? v.toString() : (BigInt(v.getTime()) * 1000n).toString()
  }
  if (type === 'string') return String(v)
  if (type === 'uuid') {
    const h = typeof v === 'string' ? v.replaceAll('-', '').toLowerCase() : hex(v)
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }
  if (type === 'binary' || type.startsWith('fixed[')) {
    return typeof v === 'string' ? Buffer.from(v, 'utf8').toString('hex') : hex(v)
  }
  const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type)
  if (dec) {
    const scale = Number(dec[2])
    // icebird gives a decimal as a JavaScript number (unscaled · 10^-scale): the unscaled
    // integer is recovered by rounding, exactly while it is below 2^51.
    const unscaled = typeof v === 'bigint' ? v : BigInt(Math.round(Number(v) * 10 ** scale))
    const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, '0')
    const int = digits.slice(0, digits.length - scale)
    return (unscaled < 0n ? '-' : '') + int + (scale > 0 ? '.' + digits.slice(digits.length - scale) : '')
  }
  throw new Error(`column type ${JSON.stringify(type)} has no canonical form`)
}

// hash64 is the first 8 bytes of the SHA-256 of s's UTF-8, big-endian.
const hash64 = s => createHash('sha256').update(s, 'utf8').digest().readBigUInt64BE(0)

const metadata = await icebergMetadata({ tableUrl: params.table, metadataFileName: params.metadata })
const schema = metadata.schemas.find(s => s['schema-id'] === metadata['current-schema-id'])
const rows = await icebergRead({ tableUrl: params.table, metadata })
const columns = schema.fields.map(f => ({ name: f.name, type: typeof f.type === 'string' ? f.type : JSON.stringify(f.type), nonNull: 0, sum: 0n }))
const values = []
for (const row of rows) {
  const out = columns.map(c => {
    const s = canonical(c.type, row[c.name])
    if (s !== null) {
      c.nonNull++
      c.sum = (c.sum + hash64(s)) & 0xffffffffffffffffn
    }
    return s
  })
  if (params.values) values.push(out)
}
const version = params.metadata ?? fetched.map(u => /([^/]+\.metadata\.json)$/.exec(u)?.[1]).find(Boolean)
process.stdout.write(JSON.stringify({
  metadata: version,
  rows: rows.length,
  columns: columns.map(c => ({ name: c.name, type: c.type, non_null: c.nonNull, sum: c.sum.toString() })),
  values: params.values ? values : undefined,
  fetched,
}) + '\n')
