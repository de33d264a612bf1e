// The sql spec both confinement suites compile: its database and questions paths are the
// only thing a case changes.
export const sqlSpec = (database: string, questions: string) => `import "std/envs/sql" as sql
experiment e {
  policy { model: "builtin:tiny" }
  rollout { iterations: 1, tasks_per_batch: 1 }
  algorithm { group_size: 2 }
  env bank extends sql.bank_demo {
    tasks: 4
    split { train: 0.5, test: 0.5 }
    database: "${database}"
    questions: "${questions}"
  }
}
`;
