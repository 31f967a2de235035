/** Why a component (or a gadget bundle it imports) could not be loaded; shown in the card. */
export class ComponentLoadError extends Error {
  override name = 'ComponentLoadError';
}
