return context;
