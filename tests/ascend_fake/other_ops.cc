// THIS IS A FAKE, NOT CANN (see fake_cann.h): an operator library with other
// operators only (as libopapi_math.so is, or a vendor's package without
// SiluGrad), which the search must pass over.
extern "C" int aclnnFakeOtherOperatorGetWorkspaceSize() { return 0; }
