"use strict";(self.rspackChunkjaxlab_report=self.rspackChunkjaxlab_report||[]).push([[882],{97(e,r,l){var o=l(440),a=l.n(o),t=l(601),j=l.n(t),p=l(831),c=j()(a());c.i(p.A),c.push([e.id,`/* The report's own stylesheet, shared with the static HTML: jaxlab.lab.view.stylesheet()
   writes it (\`jlpm css\`); tests/test_browser.py checks it is current. */

/* Interaction only: what the static HTML has no use for. */
.jaxlab-report-app .jl-toolbar {
  display: flex;
  gap: 6px;
  align-items: center;
  margin: 4px 0;
}

.jaxlab-report-app .jl-filter {
  font: inherit;
  padding: 1px 6px;
  color: inherit;
  background: var(--jp-layout-color1, transparent);
  border: 1px solid var(--jp-border-color1, #999);
  border-radius: 3px;
}

.jaxlab-report-app .jl-button {
  font: inherit;
  font-size: 11px;
  cursor: pointer;
  color: inherit;
  background: var(--jp-layout-color2, #eee);
  border: 1px solid var(--jp-border-color2, #ccc);
  border-radius: 3px;
  padding: 0 6px;
}

.jaxlab-report-app th.jl-sortable {
  cursor: pointer;
  user-select: none;
}

.jaxlab-report-app th[aria-sort='ascending']::after {
  content: ' ▲';
}

.jaxlab-report-app th[aria-sort='descending']::after {
  content: ' ▼';
}

.jaxlab-report-app tr.jl-clickable {
  cursor: pointer;
}

.jaxlab-report-app tr.jl-clickable:hover td {
  background: var(--jp-layout-color2, rgba(128, 128, 128, 0.12));
}

.jaxlab-report-app .jl-listing {
  position: relative;
}

.jaxlab-report-app .jl-copy {
  position: absolute;
  top: 3px;
  right: 4px;
  opacity: 0;
}

.jaxlab-report-app .jl-listing:hover .jl-copy,
.jaxlab-report-app .jl-copy:focus {
  opacity: 1;
}
`,""]),l.d(r,{},{A:c})},831(e,r,l){var o=l(440),a=l.n(o),t=l(601),j=(l.n(t))()(a());j.push([e.id,`.jaxlab-report.jl-scope { --jl-inserted: #116329; --jl-deleted: #82071e; --jl-memory: #3b82f6; --jl-compute: #d97706; --jl-launch: #9ca3af; --jl-fg: #1f2328; --jl-bg: #ffffff; --jl-muted: #59636e; --jl-border: #d1d9e0; --jl-code-bg: #f6f8fa; --jl-bar: #3b82f6; --jl-fault: #ffe4e1; --jl-winner: #dcfce7; --jl-comment: #6e7781; --jl-keyword: #cf222e; --jl-type: #8250df; --jl-builtin: #0550ae; --jl-function: #6639ba; --jl-variable: #953800; --jl-number: #0a7c7c; --jl-string: #0a3069; --jl-operator: #1f2328; --jl-error: #d1242f; }
@media (prefers-color-scheme: dark) { .jaxlab-report.jl-scope { --jl-inserted: #3fb950; --jl-deleted: #f85149; --jl-memory: #60a5fa; --jl-compute: #fbbf24; --jl-launch: #9ca3af; --jl-fg: #e6edf3; --jl-bg: #0d1117; --jl-muted: #9198a1; --jl-border: #3d444d; --jl-code-bg: #161b22; --jl-bar: #60a5fa; --jl-fault: #5c1a1a; --jl-winner: #14532d; --jl-comment: #8b949e; --jl-keyword: #ff7b72; --jl-type: #d2a8ff; --jl-builtin: #79c0ff; --jl-function: #d2a8ff; --jl-variable: #ffa657; --jl-number: #56d4dd; --jl-string: #a5d6ff; --jl-operator: #e6edf3; --jl-error: #ff7b72; } }
body[data-jp-theme-light="true"] .jaxlab-report.jl-scope, body.vscode-light .jaxlab-report.jl-scope { --jl-inserted: #116329; --jl-deleted: #82071e; --jl-memory: #3b82f6; --jl-compute: #d97706; --jl-launch: #9ca3af; --jl-fg: #1f2328; --jl-bg: #ffffff; --jl-muted: #59636e; --jl-border: #d1d9e0; --jl-code-bg: #f6f8fa; --jl-bar: #3b82f6; --jl-fault: #ffe4e1; --jl-winner: #dcfce7; --jl-comment: #6e7781; --jl-keyword: #cf222e; --jl-type: #8250df; --jl-builtin: #0550ae; --jl-function: #6639ba; --jl-variable: #953800; --jl-number: #0a7c7c; --jl-string: #0a3069; --jl-operator: #1f2328; --jl-error: #d1242f; }
body[data-jp-theme-light="false"] .jaxlab-report.jl-scope, body.vscode-dark .jaxlab-report.jl-scope { --jl-inserted: #3fb950; --jl-deleted: #f85149; --jl-memory: #60a5fa; --jl-compute: #fbbf24; --jl-launch: #9ca3af; --jl-fg: #e6edf3; --jl-bg: #0d1117; --jl-muted: #9198a1; --jl-border: #3d444d; --jl-code-bg: #161b22; --jl-bar: #60a5fa; --jl-fault: #5c1a1a; --jl-winner: #14532d; --jl-comment: #8b949e; --jl-keyword: #ff7b72; --jl-type: #d2a8ff; --jl-builtin: #79c0ff; --jl-function: #d2a8ff; --jl-variable: #ffa657; --jl-number: #56d4dd; --jl-string: #a5d6ff; --jl-operator: #e6edf3; --jl-error: #ff7b72; }
.jaxlab-report.jl-scope { color: var(--jp-content-font-color1, var(--jl-fg));
  background: var(--jp-layout-color0, var(--jl-bg)); padding: 6px 8px;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; line-height: 1.4; }
.jaxlab-report.jl-scope .jl-title { font-weight: 600; font-size: 14px; }
.jaxlab-report.jl-scope .jl-muted { color: var(--jp-content-font-color2, var(--jl-muted)); }
.jaxlab-report.jl-scope table { border-collapse: collapse; margin: 4px 0; color: inherit; font-size: inherit;
  table-layout: auto; }
.jaxlab-report.jl-scope th, .jaxlab-report.jl-scope td { padding: 2px 8px; text-align: left; vertical-align: top; background: none;
  border: none; border-bottom: 1px solid var(--jp-border-color2, var(--jl-border)); }
.jaxlab-report.jl-scope td.jl-num, .jaxlab-report.jl-scope th.jl-num { text-align: right; font-variant-numeric: tabular-nums; }
.jaxlab-report.jl-scope .jl-barcell { width: 160px; }
.jaxlab-report.jl-scope .jl-bar { display: block; height: 10px; min-width: 1px; background: var(--jl-bar); border-radius: 2px; }
.jaxlab-report.jl-scope tr.jl-winner td { background: var(--jl-winner); }
.jaxlab-report.jl-scope details { margin: 4px 0; }
.jaxlab-report.jl-scope details details, .jaxlab-report.jl-scope details.jl-kernel > table { margin-left: 14px; }
.jaxlab-report.jl-scope summary { cursor: pointer; }
.jaxlab-report.jl-scope pre { margin: 2px 0; padding: 6px 8px; overflow-x: auto; font-size: 12px;
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  background: var(--jl-code-bg); color: var(--jl-fg); border-radius: 3px; border: none; }
.jaxlab-report.jl-scope .jl-line { display: block; white-space: pre; }
.jaxlab-report.jl-scope .jl-ln { display: inline-block; min-width: 3em; padding-right: 1em; text-align: right;
  color: var(--jl-muted); user-select: none; }
.jaxlab-report.jl-scope .jl-gap { color: var(--jl-muted); font-style: italic; }
.jaxlab-report.jl-scope .jl-fault { background: var(--jl-fault); }
.jaxlab-report.jl-scope .jl-columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(0, 1fr)); gap: 12px; }
.jaxlab-report.jl-scope .jl-column { min-width: 0; overflow-x: auto; }
.jaxlab-report.jl-scope tr.jl-linked td { background: var(--jl-winner); }
.jaxlab-report.jl-scope .jl-figure { font-size: 10px; overflow: visible; }
.jaxlab-report.jl-scope .jl-figure .jl-frame { fill: none; stroke: var(--jl-border); }
.jaxlab-report.jl-scope .jl-figure text { fill: var(--jl-muted); text-anchor: middle; }
.jaxlab-report.jl-scope .jl-figure text.jl-right { text-anchor: end; }
.jaxlab-report.jl-scope .jl-figure text.jl-left { text-anchor: start; }
.jaxlab-report.jl-scope .jl-figure text.jl-label { fill: var(--jl-fg); text-anchor: start; }
.jaxlab-report.jl-scope .jl-figure .jl-roof { stroke: var(--jl-fg); stroke-width: 1.5; }
.jaxlab-report.jl-scope .jl-figure .jl-edge { stroke: var(--jl-muted); stroke-width: 1.2; }
.jaxlab-report.jl-scope .jl-figure .jl-break { stroke: var(--jl-deleted); stroke-width: 1.5; stroke-dasharray: 4 2; }
.jaxlab-report.jl-scope .jl-figure .jl-box { fill: var(--jl-code-bg); stroke: var(--jl-border); }
.jaxlab-report.jl-scope .jl-figure .jl-dot { fill-opacity: 0.6; stroke: var(--jl-fg); stroke-width: 0.5; }
.jaxlab-report.jl-scope .jl-figure .jl-memory { fill: var(--jl-memory); }
.jaxlab-report.jl-scope .jl-figure .jl-compute { fill: var(--jl-compute); }
.jaxlab-report.jl-scope .jl-figure .jl-launch { fill: var(--jl-launch); }
.jaxlab-report.jl-scope .jl-code .err { color: var(--jl-error); }
.jaxlab-report.jl-scope .jl-code .k, .jaxlab-report.jl-scope .jl-code .kc, .jaxlab-report.jl-scope .jl-code .kd, .jaxlab-report.jl-scope .jl-code .kn, .jaxlab-report.jl-scope .jl-code .kp, .jaxlab-report.jl-scope .jl-code .kr { color: var(--jl-keyword); }
.jaxlab-report.jl-scope .jl-code .kt, .jaxlab-report.jl-scope .jl-code .nd { color: var(--jl-type); }
.jaxlab-report.jl-scope .jl-code .na, .jaxlab-report.jl-scope .jl-code .nv, .jaxlab-report.jl-scope .jl-code .vc, .jaxlab-report.jl-scope .jl-code .vg, .jaxlab-report.jl-scope .jl-code .vi, .jaxlab-report.jl-scope .jl-code .vm { color: var(--jl-variable); }
.jaxlab-report.jl-scope .jl-code .nb, .jaxlab-report.jl-scope .jl-code .bp { color: var(--jl-builtin); }
.jaxlab-report.jl-scope .jl-code .nf, .jaxlab-report.jl-scope .jl-code .fm { color: var(--jl-function); }
.jaxlab-report.jl-scope .jl-code .s, .jaxlab-report.jl-scope .jl-code .sa, .jaxlab-report.jl-scope .jl-code .sb, .jaxlab-report.jl-scope .jl-code .sc, .jaxlab-report.jl-scope .jl-code .dl, .jaxlab-report.jl-scope .jl-code .sd, .jaxlab-report.jl-scope .jl-code .s2, .jaxlab-report.jl-scope .jl-code .se, .jaxlab-report.jl-scope .jl-code .sh, .jaxlab-report.jl-scope .jl-code .si, .jaxlab-report.jl-scope .jl-code .sx, .jaxlab-report.jl-scope .jl-code .sr, .jaxlab-report.jl-scope .jl-code .s1, .jaxlab-report.jl-scope .jl-code .ss { color: var(--jl-string); }
.jaxlab-report.jl-scope .jl-code .m, .jaxlab-report.jl-scope .jl-code .mb, .jaxlab-report.jl-scope .jl-code .mf, .jaxlab-report.jl-scope .jl-code .mh, .jaxlab-report.jl-scope .jl-code .mi, .jaxlab-report.jl-scope .jl-code .il, .jaxlab-report.jl-scope .jl-code .mo { color: var(--jl-number); }
.jaxlab-report.jl-scope .jl-code .o, .jaxlab-report.jl-scope .jl-code .ow { color: var(--jl-operator); }
.jaxlab-report.jl-scope .jl-code .c, .jaxlab-report.jl-scope .jl-code .ch, .jaxlab-report.jl-scope .jl-code .cm, .jaxlab-report.jl-scope .jl-code .cp, .jaxlab-report.jl-scope .jl-code .cpf, .jaxlab-report.jl-scope .jl-code .c1, .jaxlab-report.jl-scope .jl-code .cs { color: var(--jl-comment); }
.jaxlab-report.jl-scope .jl-code .gd { color: var(--jl-deleted); }
.jaxlab-report.jl-scope .jl-code .gh, .jaxlab-report.jl-scope .jl-code .gu { color: var(--jl-muted); }
.jaxlab-report.jl-scope .jl-code .gi { color: var(--jl-inserted); }
`,""]),l.d(r,{},{A:j})},601(e){e.exports=function(e){var r=[];return r.toString=function(){return this.map(function(r){var l="",o=void 0!==r[5];return r[4]&&(l+="@supports (".concat(r[4],") {")),r[2]&&(l+="@media ".concat(r[2]," {")),o&&(l+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),l+=e(r),o&&(l+="}"),r[2]&&(l+="}"),r[4]&&(l+="}"),l}).join("")},r.i=function(e,l,o,a,t){"string"==typeof e&&(e=[[null,e,void 0]]);var j={};if(o)for(var p=0;p<this.length;p++){var c=this[p][0];null!=c&&(j[c]=!0)}for(var n=0;n<e.length;n++){var s=[].concat(e[n]);o&&j[s[0]]||(void 0!==t&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=t),l&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=l),a&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=a):s[4]="".concat(a)),r.push(s))}},r}},440(e){e.exports=function(e){return e[1]}},953(e,r,l){l.r(r);var o=l(609),a=l.n(o),t=l(174),j=l.n(t),p=l(158),c=l.n(p),n=l(65),s=l.n(n),i=l(485),d=l.n(i),b=l(826),f=l.n(b),u=l(97),x={};x.styleTagTransform=f(),x.setAttributes=s(),x.insert=c().bind(null,"head"),x.domAPI=j(),x.insertStyleElement=d(),a()(u.A,x);let m=u.A&&u.A.locals?u.A.locals:void 0;l.d(r,{},{default:m})},609(e){var r=[];function l(e){for(var l=-1,o=0;o<r.length;o++)if(r[o].identifier===e){l=o;break}return l}function o(e,o){for(var a={},t=[],j=0;j<e.length;j++){var p=e[j],c=o.base?p[0]+o.base:p[0],n=a[c]||0,s="".concat(c," ").concat(n);a[c]=n+1;var i=l(s),d={css:p[1],media:p[2],sourceMap:p[3],supports:p[4],layer:p[5]};if(-1!==i)r[i].references++,r[i].updater(d);else{var b=function(e,r){var l=r.domAPI(r);return l.update(e),function(r){r?(r.css!==e.css||r.media!==e.media||r.sourceMap!==e.sourceMap||r.supports!==e.supports||r.layer!==e.layer)&&l.update(e=r):l.remove()}}(d,o);o.byIndex=j,r.splice(j,0,{identifier:s,updater:b,references:1})}t.push(s)}return t}e.exports=function(e,a){var t=o(e=e||[],a=a||{});return function(e){e=e||[];for(var j=0;j<t.length;j++){var p=l(t[j]);r[p].references--}for(var c=o(e,a),n=0;n<t.length;n++){var s=l(t[n]);0===r[s].references&&(r[s].updater(),r.splice(s,1))}t=c}}},158(e){var r={};e.exports=function(e,l){var o=function(e){if(void 0===r[e]){var l=document.querySelector(e);if(window.HTMLIFrameElement&&l instanceof window.HTMLIFrameElement)try{l=l.contentDocument.head}catch(e){l=null}r[e]=l}return r[e]}(e);if(!o)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");o.appendChild(l)}},485(e){e.exports=function(e){var r=document.createElement("style");return e.setAttributes(r,e.attributes),e.insert(r,e.options),r}},65(e,r,l){e.exports=function(e){var r=l.nc;r&&e.setAttribute("nonce",r)}},174(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=e.insertStyleElement(e);return{update:function(l){var o,a,t;o="",l.supports&&(o+="@supports (".concat(l.supports,") {")),l.media&&(o+="@media ".concat(l.media," {")),(a=void 0!==l.layer)&&(o+="@layer".concat(l.layer.length>0?" ".concat(l.layer):""," {")),o+=l.css,a&&(o+="}"),l.media&&(o+="}"),l.supports&&(o+="}"),(t=l.sourceMap)&&"u">typeof btoa&&(o+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),e.styleTagTransform(o,r,e.options)},remove:function(){var e;null===(e=r).parentNode||e.parentNode.removeChild(e)}}}},826(e){e.exports=function(e,r){if(r.styleSheet)r.styleSheet.cssText=e;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(e))}}}}]);