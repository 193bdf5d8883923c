/* global window, document */
// The test host of the MCP Apps views (bundled by esbuild into the page of the browser
// tests): one sandboxed frame per view, the Content-Security-Policy the host builds from the
// view's declared `_meta.ui.csp` put first in its head, and the ext-apps AppBridge talking
// to it over postMessage. Tool calls and resource reads of the view go to Node
// (window.hostCallTool, window.hostReadResource), which asks the real server.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

/** The policy a host builds from a declared csp: the spec's defaults, widened by nothing. */
function hostPolicy(csp = {}) {
  const list = (domains) => (domains && domains.length > 0 ? ` ${domains.join(' ')}` : '');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline'${list(csp.resourceDomains)}`,
    `style-src 'self' 'unsafe-inline'${list(csp.resourceDomains)}`,
    `img-src 'self' data:${list(csp.resourceDomains)}`,
    `connect-src${list(csp.connectDomains) || " 'none'"}`,
    `frame-src${list(csp.frameDomains) || " 'none'"}`,
  ].join('; ');
}

window.hostEvents = { sizes: [], links: [], initialized: false };

window.startView = async (content, toolInput, toolResult, sandbox = 'allow-scripts') => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', sandbox);
  frame.setAttribute('title', 'MCP App view');
  frame.style.width = '720px';
  frame.style.height = '600px';
  frame.style.border = '1px solid #ccc';
  const meta = `<meta http-equiv="Content-Security-Policy" content="${hostPolicy(content._meta?.ui?.csp)}">`;
  document.body.append(frame);
  const bridge = new AppBridge(
    null,
    { name: 'agent-data-test-host', version: '1' },
    { openLinks: {}, serverTools: {}, serverResources: {} },
  );
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onreadresource = (params) => window.hostReadResource(params);
  bridge.onsizechange = (size) => {
    window.hostEvents.sizes.push(size);
    if (size.height) frame.style.height = `${size.height}px`;
  };
  bridge.onopenlink = async (params) => {
    window.hostEvents.links.push(params.url);
    return {};
  };
  bridge.oninitialized = async () => {
    window.hostEvents.initialized = true;
    await bridge.sendToolInput({ arguments: toolInput });
    await bridge.sendToolResult(toolResult);
  };
  // Listening before the view loads: its ui/initialize is the first thing it sends.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = content.text.replace('<head>', `<head>${meta}`);
};
