"use strict";(self.rspackChunkjaxlab_report=self.rspackChunkjaxlab_report||[]).push([[266],{646(a,r,e){var t=e(601),o=e.n(t),n=e(314),p=(e.n(n))()(o());p.push([a.id,`/* Scoped to the interactive view; JupyterLab's variables keep it readable in light and dark themes. */
.jaxlab-report-app {
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  padding: 4px 0;
}

.jaxlab-report-app .jaxlab-title {
  font-weight: 600;
  margin-bottom: 4px;
}

.jaxlab-report-app .jaxlab-totals {
  display: flex;
  flex-wrap: wrap;
  gap: 4px;
  margin-bottom: 6px;
}

.jaxlab-report-app .jaxlab-chip {
  background: var(--jp-layout-color2);
  border-radius: 3px;
  padding: 1px 6px;
}

.jaxlab-report-app .jaxlab-table {
  border-collapse: collapse;
  width: 100%;
}

.jaxlab-report-app th,
.jaxlab-report-app td {
  border-bottom: 1px solid var(--jp-border-color2);
  padding: 2px 8px;
  text-align: left;
  vertical-align: top;
}

.jaxlab-report-app th.jaxlab-sort {
  cursor: pointer;
  user-select: none;
}

.jaxlab-report-app tr.jaxlab-row {
  cursor: pointer;
}

.jaxlab-report-app tr.jaxlab-row:hover {
  background: var(--jp-layout-color2);
}

.jaxlab-report-app .jaxlab-bar {
  background: var(--jp-brand-color1);
  height: 3px;
  min-width: 1px;
}

.jaxlab-report-app .jaxlab-stage summary {
  cursor: pointer;
  font-weight: 600;
}

.jaxlab-report-app pre {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  background: var(--jp-layout-color1);
  border: 1px solid var(--jp-border-color2);
  margin: 2px 0 6px;
  max-height: 30em;
  overflow: auto;
  padding: 4px;
}

.jaxlab-report-app .jaxlab-reason,
.jaxlab-report-app .jaxlab-note,
.jaxlab-report-app .jaxlab-empty {
  color: var(--jp-ui-font-color2);
  font-style: italic;
  margin: 2px 0;
}

.jaxlab-report-app .jaxlab-compare {
  display: flex;
  gap: 16px;
}

.jaxlab-report-app .jaxlab-compare > .jaxlab-section {
  flex: 1 1 0;
  min-width: 0;
}
`,""]),e.d(r,{},{A:p})},314(a){a.exports=function(a){var r=[];return r.toString=function(){return this.map(function(r){var e="",t=void 0!==r[5];return r[4]&&(e+="@supports (".concat(r[4],") {")),r[2]&&(e+="@media ".concat(r[2]," {")),t&&(e+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),e+=a(r),t&&(e+="}"),r[2]&&(e+="}"),r[4]&&(e+="}"),e}).join("")},r.i=function(a,e,t,o,n){"string"==typeof a&&(a=[[null,a,void 0]]);var p={};if(t)for(var i=0;i<this.length;i++){var l=this[i][0];null!=l&&(p[l]=!0)}for(var c=0;c<a.length;c++){var s=[].concat(a[c]);t&&p[s[0]]||(void 0!==n&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=n),e&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=e),o&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=o):s[4]="".concat(o)),r.push(s))}},r}},601(a){a.exports=function(a){return a[1]}},665(a,r,e){e.r(r);var t=e(72),o=e.n(t),n=e(825),p=e.n(n),i=e(659),l=e.n(i),c=e(56),s=e.n(c),u=e(540),d=e.n(u),f=e(113),x=e.n(f),b=e(646),v={};v.styleTagTransform=x(),v.setAttributes=s(),v.insert=l().bind(null,"head"),v.domAPI=p(),v.insertStyleElement=d(),o()(b.A,v);let m=b.A&&b.A.locals?b.A.locals:void 0;e.d(r,{},{default:m})},72(a){var r=[];function e(a){for(var e=-1,t=0;t<r.length;t++)if(r[t].identifier===a){e=t;break}return e}function t(a,t){for(var o={},n=[],p=0;p<a.length;p++){var i=a[p],l=t.base?i[0]+t.base:i[0],c=o[l]||0,s="".concat(l," ").concat(c);o[l]=c+1;var u=e(s),d={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==u)r[u].references++,r[u].updater(d);else{var f=function(a,r){var e=r.domAPI(r);return e.update(a),function(r){r?(r.css!==a.css||r.media!==a.media||r.sourceMap!==a.sourceMap||r.supports!==a.supports||r.layer!==a.layer)&&e.update(a=r):e.remove()}}(d,t);t.byIndex=p,r.splice(p,0,{identifier:s,updater:f,references:1})}n.push(s)}return n}a.exports=function(a,o){var n=t(a=a||[],o=o||{});return function(a){a=a||[];for(var p=0;p<n.length;p++){var i=e(n[p]);r[i].references--}for(var l=t(a,o),c=0;c<n.length;c++){var s=e(n[c]);0===r[s].references&&(r[s].updater(),r.splice(s,1))}n=l}}},659(a){var r={};a.exports=function(a,e){var t=function(a){if(void 0===r[a]){var e=document.querySelector(a);if(window.HTMLIFrameElement&&e instanceof window.HTMLIFrameElement)try{e=e.contentDocument.head}catch(a){e=null}r[a]=e}return r[a]}(a);if(!t)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");t.appendChild(e)}},540(a){a.exports=function(a){var r=document.createElement("style");return a.setAttributes(r,a.attributes),a.insert(r,a.options),r}},56(a,r,e){a.exports=function(a){var r=e.nc;r&&a.setAttribute("nonce",r)}},825(a){a.exports=function(a){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=a.insertStyleElement(a);return{update:function(e){var t,o,n;t="",e.supports&&(t+="@supports (".concat(e.supports,") {")),e.media&&(t+="@media ".concat(e.media," {")),(o=void 0!==e.layer)&&(t+="@layer".concat(e.layer.length>0?" ".concat(e.layer):""," {")),t+=e.css,o&&(t+="}"),e.media&&(t+="}"),e.supports&&(t+="}"),(n=e.sourceMap)&&"u">typeof btoa&&(t+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(n))))," */")),a.styleTagTransform(t,r,a.options)},remove:function(){var a;null===(a=r).parentNode||a.parentNode.removeChild(a)}}}},113(a){a.exports=function(a,r){if(r.styleSheet)r.styleSheet.cssText=a;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(a))}}}}]);