// How a host that follows the MCP Apps spec strictly turns a resource into the card's document:
// the policy built from the resource's `_meta.ui.csp` and nothing else, as a meta tag first
// thing in <head>. Shared by the host page (srcdoc frames) and card-flow.mjs (frames it serves).

/**
 * The policy a host that follows the MCP Apps spec strictly builds from a resource's
 * `_meta.ui.csp` and nothing else (modelled on the ext-apps reference host): resourceDomains
 * feed script/style/img/font/media sources, connectDomains connect-src; no blob:, no eval,
 * no workers, nothing else.
 */
export function policyFrom(csp) {
  const origins = (list) => (Array.isArray(list) ? list : []).filter((d) => typeof d === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^\s;'",]+$/i.test(d));
  const resources = origins(csp.resourceDomains).join(' ');
  const connects = origins(csp.connectDomains).join(' ');
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: ${resources}`,
    `font-src data: ${resources}`,
    `media-src data: ${resources}`,
    `connect-src ${connects || "'none'"}`,
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "worker-src 'none'",
  ].map((directive) => directive.trim()).join('; ');
}

/**
 * The resource's HTML as the iframe's srcdoc: the policy as a meta tag first thing in <head>,
 * then a recorder of the policy's violations (the host's, not the card's: tests read it).
 */
export function frameDocument(html, csp) {
  const recorder = "<script>window.svcViolations=[];document.addEventListener('securitypolicyviolation',function(e){window.svcViolations.push({directive:e.effectiveDirective,blocked:e.blockedURI});});<\/script>";
  const policy = csp === null ? '' : `<meta http-equiv="Content-Security-Policy" content="${policyFrom(csp).replace(/"/g, '&quot;')}">`;
  const at = html.indexOf('<head>');
  if (at < 0) throw new Error('the resource document has no <head>');
  const cut = at + '<head>'.length;
  return html.slice(0, cut) + policy + recorder + html.slice(cut);
}
