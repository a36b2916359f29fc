/**
 * JupyterLab renderer for jaxlab's report MIME type.
 *
 * The kernel reports jaxlab displays carry the whole report as JSON beside
 * their static HTML; with this extension JupyterLab shows that JSON as an
 * interactive view: a sortable kernel table whose rows open onto the stages
 * (jaxpr equations, IR, tuned IR, tuning, source, timings).
 * Every string comes from user code, so the DOM is built with textContent only.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

export const MIME_TYPE = 'application/vnd.jaxlab.report+json';

/** One KernelEvent.to_dict() from jaxlab/events.py. */
export interface KernelEvent {
  name: string;
  backend: string;
  kind: string;
  input_shapes: number[][];
  input_dtypes: string[];
  output_shapes: number[][];
  output_dtypes: string[];
  equations: string[];
  ir: string;
  tuned_ir: string;
  tuning: Record<string, unknown> | null;
  source: string;
  source_language: string;
  compile_ms: number;
  dispatch_ms: number;
  device_ms: number | null;
  flops: number;
  bytes: number;
  cache_hit: boolean;
  key: string;
  reason: string;
}

export interface WallTimes {
  runs: number;
  best_ms: number;
  median_ms: number;
}

export interface ReportData {
  version: number;
  title: string;
  kernels: KernelEvent[];
  program: string | null;
  totals: Record<string, unknown>;
  wall?: WallTimes | null;   // %%kernel --repeat
}

/** `%%kernel --compare`: two reports of the same cell. */
export interface ComparisonData {
  version: number;
  compare: ReportData[];
}

/** Device time where the GPU measured it, else host dispatch time. */
export function kernelMs(k: KernelEvent): number {
  return k.device_ms ?? k.dispatch_ms;
}

/** Achieved rate in units per second / 1e9 (GFLOP/s from flops, GB/s from bytes). */
function giga(amount: number, ms: number): number {
  return ms > 0 ? amount / (ms * 1e6) : 0;
}

function shapeText(shapes: number[][]): string {
  return shapes.map(s => (s.length ? s.join('x') : 'scalar')).join(', ');
}

interface Column {
  title: string;
  key: (k: KernelEvent, index: number) => number | string;
  text: (k: KernelEvent, index: number) => string;
}

const COLUMNS: Column[] = [
  { title: '#', key: (_, i) => i, text: (_, i) => String(i) },
  { title: 'kernel', key: k => k.name, text: k => k.name },
  { title: 'backend', key: k => k.backend, text: k => k.backend },
  { title: 'output', key: k => shapeText(k.output_shapes), text: k => shapeText(k.output_shapes) },
  { title: 'time', key: kernelMs, text: k => `${(kernelMs(k) * 1000).toFixed(1)} µs` },
  { title: 'compile', key: k => k.compile_ms, text: k => (k.cache_hit ? 'cached' : `${k.compile_ms.toFixed(2)} ms`) },
  { title: 'GFLOP/s', key: k => giga(k.flops, kernelMs(k)), text: k => giga(k.flops, kernelMs(k)).toFixed(2) },
  { title: 'GB/s', key: k => giga(k.bytes, kernelMs(k)), text: k => giga(k.bytes, kernelMs(k)).toFixed(2) }
];
const TIME_COLUMN = 4;

/** The order rows appear in: by `column` (ascending unless `descending`), ties in event order. */
export function sortedIndices(kernels: KernelEvent[], column: number, descending: boolean): number[] {
  const indices = kernels.map((_, i) => i);
  if (column < 0) {
    return indices;
  }
  const key = COLUMNS[column].key;
  const sign = descending ? -1 : 1;
  return indices.sort((a, b) => {
    const ka = key(kernels[a], a);
    const kb = key(kernels[b], b);
    const order = ka < kb ? -1 : ka > kb ? 1 : 0;
    return order * sign || a - b;
  });
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K, className = '', text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text) {
    node.textContent = text;
  }
  return node;
}

/** A collapsible stage: a <details> with a preformatted body. */
function stage(title: string, body: string, open = false): HTMLElement {
  const details = element('details', 'jaxlab-stage');
  details.open = open;
  details.appendChild(element('summary', '', title));
  details.appendChild(element('pre', '', body || '(empty)'));
  return details;
}

function tuningText(tuning: Record<string, unknown> | null): string {
  if (!tuning) {
    return '';
  }
  return Object.entries(tuning)
    .map(([name, value]) => {
      // webgpu records {value, reason} per choice; others give plain values
      if (value && typeof value === 'object' && 'value' in value) {
        const v = value as { value: unknown; reason?: unknown };
        return `${name} = ${JSON.stringify(v.value)}${v.reason ? `    # ${String(v.reason)}` : ''}`;
      }
      return `${name} = ${typeof value === 'string' ? value : JSON.stringify(value)}`;
    })
    .join('\n');
}

function timingsText(k: KernelEvent): string {
  const ms = kernelMs(k);
  return [
    `compile      ${k.cache_hit ? 'cache hit' : `${k.compile_ms.toFixed(3)} ms`}`,
    `dispatch     ${k.dispatch_ms.toFixed(3)} ms (host)`,
    `device       ${k.device_ms === null ? 'not measured' : `${k.device_ms.toFixed(3)} ms`}`,
    `flops        ${k.flops}  (${giga(k.flops, ms).toFixed(2)} GFLOP/s)`,
    `bytes        ${k.bytes}  (${giga(k.bytes, ms).toFixed(2)} GB/s)`,
    `inputs       ${shapeText(k.input_shapes)}  ${k.input_dtypes.join(', ')}`,
    `outputs      ${shapeText(k.output_shapes)}  ${k.output_dtypes.join(', ')}`
  ].join('\n');
}

function kernelDetails(k: KernelEvent): HTMLElement {
  const box = element('div', 'jaxlab-detail-body');
  if (k.reason) {
    box.appendChild(element('p', 'jaxlab-reason', k.reason));
  }
  box.appendChild(stage('jaxpr equations', k.equations.join('\n')));
  box.appendChild(stage('IR', k.ir));
  box.appendChild(stage('tuned IR', k.tuned_ir));
  box.appendChild(stage('tuning', tuningText(k.tuning)));
  box.appendChild(stage(`source (${k.source_language || 'text'})`, k.source, true));
  box.appendChild(stage('timings', timingsText(k)));
  return box;
}

/** One report: title, totals, the sortable kernel table, the jit program. */
export class ReportSection {
  readonly node: HTMLElement = element('div', 'jaxlab-section');
  private sortColumn = -1;
  private descending = false;
  private readonly expanded = new Set<number>();

  constructor(private readonly data: ReportData) {
    this.draw();
  }

  /** Click a header to sort by it; again to reverse. */
  sortBy(column: number): void {
    this.descending = this.sortColumn === column ? !this.descending : column === TIME_COLUMN;
    this.sortColumn = column;
    this.draw();
  }

  toggle(index: number): void {
    if (!this.expanded.delete(index)) {
      this.expanded.add(index);
    }
    this.draw();
  }

  private draw(): void {
    const data = this.data;
    this.node.textContent = '';
    if (data.version !== 1) {
      this.node.appendChild(element('p', 'jaxlab-note',
        `report version ${data.version}; this viewer reads version 1`));
    }
    const count = `${data.kernels.length} dispatch${data.kernels.length === 1 ? '' : 'es'}`;
    this.node.appendChild(element('div', 'jaxlab-title',
      data.title ? `jaxlab report: ${data.title}` : `jaxlab report: ${count}`));
    this.node.appendChild(totals({ ...(data.totals || {}), ...wallTotals(data.wall) }));
    if (data.kernels.length) {
      this.node.appendChild(this.table(data.kernels));
    } else {
      this.node.appendChild(element('p', 'jaxlab-empty', 'no kernels ran'));
    }
    if (data.program) {
      this.node.appendChild(stage('jit program', data.program));
    }
  }

  private table(kernels: KernelEvent[]): HTMLElement {
    const table = element('table', 'jaxlab-table');
    const head = table.createTHead().insertRow();
    COLUMNS.forEach((column, c) => {
      const arrow = c === this.sortColumn ? (this.descending ? ' ▼' : ' ▲') : '';
      const th = element('th', 'jaxlab-sort', column.title + arrow);
      th.title = `sort by ${column.title}`;
      th.addEventListener('click', () => this.sortBy(c));
      head.appendChild(th);
    });
    const longest = Math.max(...kernels.map(kernelMs), 1e-9);
    const body = table.createTBody();
    for (const i of sortedIndices(kernels, this.sortColumn, this.descending)) {
      const k = kernels[i];
      const row = body.insertRow();
      row.className = 'jaxlab-row';
      row.title = 'show the stages of this kernel';
      row.addEventListener('click', () => this.toggle(i));
      COLUMNS.forEach((column, c) => {
        const cell = row.insertCell();
        cell.textContent = column.text(k, i);
        if (c === TIME_COLUMN) {
          const bar = element('div', 'jaxlab-bar');
          bar.style.width = `${(100 * kernelMs(k)) / longest}%`;
          cell.appendChild(bar);
        }
      });
      if (this.expanded.has(i)) {
        const detail = body.insertRow();
        detail.className = 'jaxlab-detail';
        const cell = detail.insertCell();
        cell.colSpan = COLUMNS.length;
        cell.appendChild(kernelDetails(k));
      }
    }
    return table;
  }
}

function totals(values: Record<string, unknown>): HTMLElement {
  const row = element('div', 'jaxlab-totals');
  for (const [name, value] of Object.entries(values)) {
    if (value === null || value === undefined) {
      continue;
    }
    const text = typeof value === 'number' && !Number.isInteger(value) ? value.toFixed(3) : String(value);
    row.appendChild(element('span', 'jaxlab-chip', `${name}: ${text}`));
  }
  return row;
}

function wallTotals(wall: WallTimes | null | undefined): Record<string, unknown> {
  return wall ? { runs: wall.runs, best_ms: wall.best_ms, median_ms: wall.median_ms } : {};
}

function isReport(data: unknown): data is ReportData {
  return !!data && typeof data === 'object' && Array.isArray((data as ReportData).kernels);
}

function isComparison(data: unknown): data is ComparisonData {
  return !!data && typeof data === 'object' && Array.isArray((data as ComparisonData).compare);
}

/** The renderer: one report, or the two sides of a `%%kernel --compare`. */
export class ReportView extends Widget implements IRenderMime.IRenderer {
  private readonly mimeType: string;

  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    // .jaxlab-report is the class the static HTML report uses too
    this.addClass('jaxlab-report');
    this.addClass('jaxlab-report-app');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data: unknown = model.data[this.mimeType];
    const reports: unknown[] = isComparison(data) ? data.compare : [data];
    this.node.textContent = '';
    const row = element('div', reports.length > 1 ? 'jaxlab-compare' : '');
    for (const report of reports) {
      row.appendChild(isReport(report) ? new ReportSection(report).node
        : element('p', 'jaxlab-empty', 'jaxlab: this report has no kernel data'));
    }
    this.node.appendChild(row);
    return Promise.resolve();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  createRenderer: options => new ReportView(options)
};

const extension: IRenderMime.IExtension = {
  id: 'jaxlab-report:plugin',
  rendererFactory,
  // below text/html (50): where this extension is installed it wins over the static HTML
  rank: 10,
  dataType: 'json'
};

export default extension;
