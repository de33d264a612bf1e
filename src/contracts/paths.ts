// The folder shipped with the package, located from this module (src/contracts/ in the sources,
// dist/contracts/ once built: both two levels below the package root).
import { fileURLToPath } from "node:url";

/** The stdlib folder shipped with the package (`stdlib/`, holding `std/`). */
export const STDLIB_ROOT = fileURLToPath(new URL("../../stdlib", import.meta.url));
