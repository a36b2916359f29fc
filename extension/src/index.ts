/**
 * JupyterLab renderer for jaxlab's report MIME type.
 *
 * A jaxlab report carries, beside its static HTML, the same report as a view
 * tree (jaxlab/lab/view.py: lines, tables, highlighted code, folds, columns)
 * with every number already formatted. This renderer draws that tree with the
 * elements and classes the static HTML uses, styled by the same stylesheet
 * (style/report.css is written by `python -m jaxlab.lab.view`), so both show
 * the same things the same way. It adds only interaction: sortable tables, a
 * kernel filter, a click on a kernel row opening its stages, unfold/fold all,
 * and copy buttons on listings.
 * Every string comes from user code, so the DOM is built with textContent only.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

export const MIME_TYPE = 'application/vnd.jaxlab.report+json';
export const VERSION = 2;

export interface LineNode { t: 'line'; text: string; style: string }
export type Cell = string | { bar: number };
export interface TableNode {
  t: 'table';
  headers: string[];
  rows: Cell[][];
  align: string;
  title: string;
  marked: number[];
  name: string;
  keys: (number | string)[][] | null;
  /** Per row, the places it stands for (a user line): hovering a row lights every row
   * of the report that shares one (a generated line and the user line it computes). */
  links?: string[][] | null;
}
/**
 * Consecutive lines from line `from` (1-based): their text, and per line the token
 * classes as `class:length` runs (lengths in code points); or a gap of omitted lines.
 */
export type CodePart = { from: number; text: string; runs: string; marked: number[] } | { gap: number };
/** `full`: the whole text of a capped listing, where the report had room for it. */
export interface CodeNode { t: 'code'; language: string; parts: CodePart[]; full?: string | null }

/** One line's tokens: its text cut as its runs say. */
export function tokens(line: string, runs: string): [string, string][] {
  const chars = Array.from(line);
  const found: [string, string][] = [];
  let at = 0;
  for (const run of runs ? runs.split(' ') : []) {
    const colon = run.lastIndexOf(':');
    const length = Number(run.slice(colon + 1));
    found.push([run.slice(0, colon), chars.slice(at, at + length).join('')]);
    at += length;
  }
  return found;
}
export interface PreNode { t: 'pre'; text: string }
/** A plot as marks in whole pixels (fields left out are 0 or ''); a circle's text is its tooltip. */
export interface Mark {
  k: 'line' | 'circle' | 'text' | 'rect';
  x?: number; y?: number; x2?: number; y2?: number; r?: number; text?: string; cls?: string;
}
export interface FigureNode { t: 'figure'; width: number; height: number; title: string; marks: Mark[] }
export interface FoldNode { t: 'fold'; label: string; open: boolean; cls: string; children: ViewNode[] }
export interface GroupNode { t: 'block' | 'columns'; children: ViewNode[] }
export type ViewNode = LineNode | TableNode | CodeNode | PreNode | FoldNode | GroupNode | FigureNode;

export interface ReportData {
  version: number;
  view: ViewNode;
}

/** The root classes of the static HTML report: the shared stylesheet is scoped to them. */
const ROOT_CLASSES = ['jaxlab-report', 'jl-scope'];

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

export function gapText(count: number): string {
  return `… ${count} lines omitted …`;
}

/** The order of a table's rows: by `column` (ascending unless `descending`), ties in order. */
export function sortedRows(keys: (number | string)[][], column: number, descending: boolean): number[] {
  const order = keys.map((_, i) => i);
  if (column < 0) {
    return order;
  }
  const sign = descending ? -1 : 1;
  return order.sort((a, b) => {
    const ka = keys[a][column];
    const kb = keys[b][column];
    return (ka < kb ? -1 : ka > kb ? 1 : 0) * sign || a - b;
  });
}

/** A button that is interaction only: marked jl-ui, so it is not part of the report's text. */
function uiButton(label: string, title: string, onClick: () => void): HTMLButtonElement {
  const button = element('button', 'jl-ui jl-button', label);
  button.type = 'button';
  button.title = title;
  button.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return button;
}

function copyButton(text: () => string): HTMLButtonElement {
  const button = uiButton('copy', 'copy to the clipboard', () => {
    void navigator.clipboard?.writeText(text()).then(() => {
      button.textContent = 'copied';
      setTimeout(() => (button.textContent = 'copy'), 1200);
    });
  });
  button.classList.add('jl-copy');
  return button;
}

function cellNode(tag: 'td' | 'th', cell: Cell, align: string): HTMLElement {
  const node = element(tag);
  if (typeof cell === 'string') {
    node.textContent = cell;
    if (align === 'r') {
      node.className = 'jl-num';
    }
  } else {
    node.className = 'jl-barcell';
    const bar = element('span', 'jl-bar');
    bar.style.width = `${(100 * cell.bar).toFixed(1)}%`;
    node.appendChild(bar);
  }
  return node;
}

/** Draws one view tree; `kernels` collects the kernel folds for the summary table's clicks. */
const SVG = 'http://www.w3.org/2000/svg';

/** One plot mark as an SVG element (attributes only: no markup is parsed). */
function markNode(given: Mark): SVGElement {
  const mark = { x: 0, y: 0, x2: 0, y2: 0, r: 0, text: '', cls: '', ...given };
  const make = (tag: string, attrs: Record<string, number | string>): SVGElement => {
    const node = document.createElementNS(SVG, tag) as SVGElement;
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, String(v)));
    if (mark.cls) {
      node.setAttribute('class', mark.cls);
    }
    return node;
  };
  switch (mark.k) {
    case 'line':
      return make('line', { x1: mark.x, y1: mark.y, x2: mark.x2, y2: mark.y2 });
    case 'rect':
      return make('rect', { x: mark.x, y: mark.y, width: mark.x2 - mark.x, height: mark.y2 - mark.y });
    case 'circle': {
      const circle = make('circle', { cx: mark.x, cy: mark.y, r: mark.r });
      const title = document.createElementNS(SVG, 'title');
      title.textContent = mark.text;
      circle.appendChild(title);
      return circle;
    }
    default: {
      const text = make('text', { x: mark.x, y: mark.y });
      text.textContent = mark.text;
      return text;
    }
  }
}

class Drawer {
  readonly kernels: HTMLDetailsElement[] = [];
  readonly folds: HTMLDetailsElement[] = [];
  /** Rows by the places they stand for (TableNode.links), across the report's tables. */
  private readonly linked = new Map<string, HTMLElement[]>();

  draw(node: ViewNode): HTMLElement | DocumentFragment {
    switch (node.t) {
      case 'line':
        return element('div', node.style, node.text);
      case 'table':
        return this.table(node);
      case 'code':
        return this.code(node);
      case 'pre': {
        const pre = element('pre', 'jl-pre', node.text);
        return this.withCopy(pre, () => node.text);
      }
      case 'fold':
        return this.fold(node);
      case 'figure':
        return this.figure(node);
      case 'columns': {
        const columns = element('div', 'jl-columns');
        for (const child of node.children) {
          const column = element('div', 'jl-column');
          column.appendChild(this.draw(child));
          columns.appendChild(column);
        }
        return columns;
      }
      default: {
        const fragment = document.createDocumentFragment();
        for (const child of node.children) {
          fragment.appendChild(this.draw(child));
        }
        return fragment;
      }
    }
  }

  private figure(node: FigureNode): HTMLElement {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'jl-figure');
    svg.setAttribute('width', String(node.width));
    svg.setAttribute('height', String(node.height));
    svg.setAttribute('viewBox', `0 0 ${node.width} ${node.height}`);
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', node.title);
    node.marks.forEach(mark => svg.appendChild(markNode(mark)));
    const box = element('div', 'jl-figure-box');
    box.appendChild(svg);
    return box;
  }

  /** Hovering a row lights every row that shares one of its places. */
  private link(row: HTMLElement, places: string[]): void {
    places.forEach(p => this.linked.set(p, [...(this.linked.get(p) ?? []), row]));
    const light = (on: boolean) => places.forEach(p =>
      (this.linked.get(p) ?? []).forEach(r => r.classList.toggle('jl-linked', on)));
    row.addEventListener('mouseenter', () => light(true));
    row.addEventListener('mouseleave', () => light(false));
  }

  private fold(node: FoldNode): HTMLElement {
    const details = element('details', node.cls);
    details.open = node.open;
    details.appendChild(element('summary', '', node.label));
    for (const child of node.children) {
      details.appendChild(this.draw(child));
    }
    if (node.cls === 'jl-kernel') {
      this.kernels.push(details);
    }
    this.folds.push(details);
    return details;
  }

  private code(node: CodeNode): HTMLElement {
    const pre = element('pre', 'jl-code');
    const text: string[] = [];
    for (const part of node.parts) {
      if ('gap' in part) {
        pre.appendChild(element('span', 'jl-line jl-gap', gapText(part.gap)));
        text.push(gapText(part.gap));
        continue;
      }
      const runs = part.runs.split('\n');
      part.text.split('\n').forEach((line, i) => {
        const number = part.from + i;
        const span = element('span', part.marked.includes(number) ? 'jl-line jl-fault' : 'jl-line');
        span.appendChild(element('span', 'jl-ln', String(number)));
        for (const [cls, piece] of tokens(line, runs[i] ?? '')) {
          span.appendChild(cls ? element('span', cls, piece) : document.createTextNode(piece));
        }
        pre.appendChild(span);
        text.push(line);
      });
    }
    const omitted = node.parts.reduce((n, part) => n + ('gap' in part ? part.gap : 0), 0);
    const shown = { whole: false };
    const box = this.withCopy(pre, () => (shown.whole ? node.full ?? '' : text.join('\n')));
    if (omitted && node.full != null) {
      const lines = node.full.replace(/\n$/, '').split('\n');
      const reveal = uiButton(`show all ${lines.length} lines`, 'the whole source, unhighlighted', () => {
        pre.textContent = '';
        lines.forEach((line, i) => {
          const span = element('span', 'jl-line');
          span.appendChild(element('span', 'jl-ln', String(i + 1)));
          span.appendChild(document.createTextNode(line));
          pre.appendChild(span);
        });
        shown.whole = true;
        reveal.remove();
      });
      box.insertBefore(reveal, pre);
    } else if (omitted) {
      box.insertBefore(element('span', 'jl-ui jl-muted',
        'the whole source is too long to keep in the report'), pre);
    }
    return box;
  }

  private withCopy(pre: HTMLElement, text: () => string): HTMLElement {
    const box = element('div', 'jl-listing');
    box.appendChild(copyButton(text));
    box.appendChild(pre);
    return box;
  }

  private table(node: TableNode): DocumentFragment {
    const fragment = document.createDocumentFragment();
    if (node.title) {
      fragment.appendChild(element('div', 'jl-title', node.title));
    }
    const table = element('table');
    const head = table.createTHead().insertRow();
    const body = table.createTBody();
    const rows = node.rows.map((cells, i) => {
      const row = element('tr', node.marked.includes(i) ? 'jl-winner' : '');
      cells.forEach((cell, c) => row.appendChild(cellNode('td', cell, node.align[c])));
      const places = node.links?.[i] ?? [];
      if (places.length) {
        this.link(row, places);
      }
      return row;
    });
    let column = -1;
    let descending = false;
    const place = () => {
      body.textContent = '';
      for (const i of sortedRows(node.keys ?? node.rows.map(() => []), column, descending)) {
        body.appendChild(rows[i]);
      }
    };
    node.headers.forEach((title, c) => {
      const th = cellNode('th', title, node.align[c]);
      if (node.keys) {
        th.classList.add('jl-sortable');
        th.title = `sort by ${title}`;
        th.addEventListener('click', () => {
          descending = column === c ? !descending : node.align[c] === 'r';
          column = c;
          head.querySelectorAll('th').forEach(h => h.removeAttribute('aria-sort'));
          th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
          place();
        });
      }
      head.appendChild(th);
    });
    place();
    if (node.name === 'kernels') {
      fragment.appendChild(this.kernelFilter(node, rows));
      rows.forEach((row, i) => {
        row.classList.add('jl-clickable');
        row.title = 'show this kernel\'s stages';
        row.addEventListener('click', () => this.openKernel(i));
      });
    }
    fragment.appendChild(table);
    return fragment;
  }

  /** A filter box: rows (and kernel folds) whose kernel name lacks the text hide. */
  private kernelFilter(node: TableNode, rows: HTMLElement[]): HTMLElement {
    const bar = element('div', 'jl-ui jl-toolbar');
    const input = element('input', 'jl-filter');
    input.type = 'search';
    input.placeholder = 'filter kernels';
    input.addEventListener('input', () => {
      const text = input.value.toLowerCase();
      node.rows.forEach((cells, i) => {
        const shown = String(cells[1]).toLowerCase().includes(text);
        rows[i].style.display = shown ? '' : 'none';
        if (this.kernels[i]) {
          this.kernels[i].style.display = shown ? '' : 'none';
        }
      });
    });
    bar.appendChild(input);
    bar.appendChild(uiButton('unfold all', 'open every kernel and stage',
      () => this.folds.forEach(f => (f.open = true))));
    bar.appendChild(uiButton('fold all', 'close every kernel and stage',
      () => this.folds.forEach(f => (f.open = false))));
    return bar;
  }

  openKernel(index: number): void {
    const fold = this.kernels[index];
    if (fold) {
      fold.open = true;
      fold.scrollIntoView({ block: 'nearest' });
    }
  }
}

function isReport(data: unknown): data is ReportData {
  return !!data && typeof data === 'object' && 'view' in data;
}

/** The renderer: the report's view tree, drawn like the static HTML, plus interaction. */
export class ReportView extends Widget implements IRenderMime.IRenderer {
  private readonly mimeType: string;

  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    ROOT_CLASSES.forEach(c => this.addClass(c));
    this.addClass('jaxlab-report-app');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data: unknown = model.data[this.mimeType];
    this.node.textContent = '';
    if (!isReport(data) || data.version !== VERSION) {
      const version = isReport(data) ? data.version : 'unknown';
      this.node.appendChild(element('div', 'jl-muted',
        `jaxlab: report version ${version}; this viewer reads version ${VERSION}`));
      return Promise.resolve();
    }
    this.node.appendChild(new Drawer().draw(data.view));
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
