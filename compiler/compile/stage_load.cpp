// A compile's load and partition phases: every model loaded (at its input shapes and values),
// checked not to be a compiled model already, and partitioned across the --ep backends, before
// anything is written.
#include "compile/compile_stages.h"

namespace ortc::compile {
namespace {

bool HasEpContextNodes(const graph::Model& m) {
  for (const auto& n : m.proto.graph().node()) {
    if (format::IsEpContextNode(n)) return true;
  }
  return false;
}

// Loads, checks and partitions one model.
Status PrepareJob(CompileRun& run, ModelJob* job) {
  graph::LoadOptions load;
  load.input_shapes = job->input_shapes;
  load.input_values = run.o.input_values;
  load.input_shapes_of_group = run.group();
  load.fold_shapes = true;
  if (run.o.last_token_logits) load.last_position_outputs = {"logits"};
  auto loaded = graph::LoadModelFromFile(job->source, load);
  if (!loaded.ok()) return loaded.status();
  job->model = std::move(loaded).value();
  if (HasEpContextNodes(*job->model)) {
    return InvalidArgument(job->model->display_name +
                           " already contains EPContext nodes (it is a compiled model); compile "
                           "the source model instead");
  }
  run.clock.Lap("load");
  job->partition = partition::PartitionGraph(job->model->graph, run.order);
  ORTC_RETURN_IF_ERROR(
      partition::CheckPartition(job->model->graph, job->partition, run.o.max_partitions));
  run.clock.Lap("partition");
  job->ep_nodes.assign(job->partition.groups.size(), std::nullopt);
  return Status::Ok();
}

// In a group each --input-shape applies to the models that have that input; one that no model
// has is a typo. A profile's shapes name inputs of its model.
Status CheckInputNamesUsed(const CompileRun& run) {
  const CompileOptions& o = run.o;
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    const auto* profile =
        run.profile_names.empty() ? ProfileNamed(o, run.jobs[i].stem) : &o.shape_profiles[i];
    for (const auto& [name, dims] : profile ? profile->shapes : graph::InputShapes{})
      if (!run.jobs[i].model->applied_input_shapes.count(name))
        return InvalidArgument("--shape-profile " + profile->name + " names '" + name +
                               "', which the model has no input of");
  }
  for (const auto& [name, dims] : o.input_shapes) {
    bool used = false;
    for (const auto& job : run.jobs) used = used || job.model->applied_input_shapes.count(name);
    if (run.group() && !used)
      return InvalidArgument("--input-shape names '" + name + "', which no model of the group has");
  }
  for (const auto& [name, value] : o.input_values) {
    bool used = false;
    for (const auto& job : run.jobs) used = used || job.model->applied_input_values.count(name);
    if (run.group() && !used)
      return InvalidArgument("--input-value names '" + name + "', which no model of the group has");
  }
  return Status::Ok();
}

}  // namespace

Status LoadAndPartition(CompileRun& run) {
  run.Progress("load", 0, 1);
  for (auto& job : run.jobs) ORTC_RETURN_IF_ERROR(PrepareJob(run, &job));
  return CheckInputNamesUsed(run);
}

}  // namespace ortc::compile
