// The blocks of an expression as a tree: a function body, an if's branches, a match's
// clauses, each inside the block that holds it. For placing a shared value where every
// use can see it and no branch that may not run computes it for the others: in the
// innermost block enclosing all its uses (the printer's %N, ANF's lets).
//
//   ScopeTree tree;
//   const int body = tree.AddRoot();
//   const int then_branch = tree.Add(body), else_branch = tree.Add(body);
//   tree.Lca(then_branch, else_branch) == body
#ifndef DYNVM_COMPILER_IR_SCOPE_TREE_H_
#define DYNVM_COMPILER_IR_SCOPE_TREE_H_

#include <vector>

namespace dynvm::compiler {

class ScopeTree {
 public:
  // A new tree's root block; its index.
  int AddRoot() { return Push(-1, 0); }
  // A new block inside `parent`; its index.
  int Add(int parent) { return Push(parent, blocks_[parent].depth + 1); }
  int size() const { return static_cast<int>(blocks_.size()); }
  // The innermost block enclosing blocks `a` and `b` of one tree.
  int Lca(int a, int b) const {
    while (blocks_[a].depth > blocks_[b].depth) a = blocks_[a].parent;
    while (blocks_[b].depth > blocks_[a].depth) b = blocks_[b].parent;
    while (a != b) {
      a = blocks_[a].parent;
      b = blocks_[b].parent;
    }
    return a;
  }

 private:
  struct Block {
    int parent, depth;
  };
  int Push(int parent, int depth) {
    blocks_.push_back({parent, depth});
    return size() - 1;
  }
  std::vector<Block> blocks_;
};

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_SCOPE_TREE_H_
