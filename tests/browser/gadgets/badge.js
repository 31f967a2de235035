// A declared gadget package as a registry would serve it: a self-contained ES module whose only
// bare imports are React's, which the mount points at its own instance. `useState` proves the
// bundle and the card share one React (a second copy would throw "Invalid hook call").
import { useState } from 'react';
import { jsx } from 'react/jsx-runtime';

export function Badge({ label }) {
  const [renders] = useState(1);
  return jsx('span', { className: 'svc-test-badge', 'data-gadget': 'badge', children: `badge: ${label} (${renders})` });
}
