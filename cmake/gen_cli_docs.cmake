# Generates the man page (modelstat.1) from the binaries' --help and the bash
# completion script from `modelstat --bash-completion`, so both always list
# what the built binaries accept. Run at build time:
#   cmake -DMODELSTAT=path/to/modelstat -DVERSION=x.y.z -DOUT_DIR=dir -P gen_cli_docs.cmake
cmake_minimum_required(VERSION 3.22)

function(help_of out)
  execute_process(COMMAND ${MODELSTAT} ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "modelstat ${ARGN} --help failed (${rc}): ${err}")
  endif()
  # roff: a backslash is \e, a line starting with . or ' is protected by \&,
  # a hyphen is \- (so that flags stay searchable and copy as ASCII).
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

help_of(main_help)
set(page ".TH MODELSTAT 1 \"\" \"modelstat ${VERSION}\" \"User Commands\"
.SH NAME
modelstat \\- what a neural network costs (params, MACs, FLOPs, memory) and where its time goes
.SH SYNOPSIS
.B modelstat
[\\fISUBCOMMAND\\fR] \\fIMODEL.onnx\\fR [\\fIOPTIONS\\fR]
.SH DESCRIPTION
Static analysis of ONNX models, and per-layer profiling with LibTorch on the CPU or CUDA.
Without a subcommand, \\fBmodelstat MODEL.onnx\\fR is \\fBmodelstat analyze MODEL.onnx\\fR.
Each subcommand's options follow, as its \\fB\\-\\-help\\fR prints them.
.PP
.nf
${main_help}.fi
")
foreach(sub analyze ops profile verify report device fit compare)
  help_of(sub_help ${sub})
  string(APPEND page ".SH \"modelstat ${sub}\"\n.nf\n${sub_help}.fi\n")
endforeach()
string(APPEND page ".SH EXIT STATUS
0 ok; 1 runtime failure (compare: a significant slowdown); 2 bad usage, bad input, or a model this machine
cannot run; 3 (fit) a budget is predicted to be exceeded.
.SH FILES
Device ceilings saved by \\fBmodelstat device\\fR: $MODELSTAT_CEILINGS_DIR, else $XDG_CACHE_HOME/modelstat, else
~/.cache/modelstat.
.SH SEE ALSO
The documentation installed in share/doc/modelstat (README.md, COST_MODEL.md, FIT.md, the JSON schemas).
")
file(WRITE ${OUT_DIR}/modelstat.1 "${page}")

execute_process(COMMAND ${MODELSTAT} --bash-completion OUTPUT_FILE ${OUT_DIR}/modelstat.bash RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "modelstat --bash-completion failed (${rc})")
endif()
