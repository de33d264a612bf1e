// TextWorld's part of the checker's catalog of env library names: the challenges the pinned
// version defines, read off the installed library by runtime-gpu/arl_envhost/catalog.py. A file
// of its own because it is generated: test/envs/library-catalog.test.ts keeps it equal to the
// library's own names (and to the challenge knob's enum) and rewrites the part below with
// ARL_WRITE_CATALOG=1 when the pin moves.

export interface TextWorldCatalog {
  readonly version: string;
  readonly challenges: readonly string[];
}

// BEGIN generated
// prettier-ignore
export const textworldCatalog: TextWorldCatalog = {
  version: "1.7.0",
  challenges: ["tw-coin_collector","tw-cooking","tw-simple","tw-treasure_hunter"],
};
// END generated
